import type { ReactElement } from 'react';
import { adminProjectInput, type AdminProject } from '../../../../shared/adminApi.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { serverCall } from '../serverBridge.js';
import { TextInput, Toggle } from './fields.js';
import { EditorPanel, ListPanel, useSelection } from './layout.js';
import { useAdminStore } from './store.js';
import { useAdminForm } from './useAdminForm.js';

/** Projects that usage is billed to; an inactive one can no longer be picked at a station. */
export function ProjectsAdmin(): ReactElement {
  const projects = useAdminStore((s) => s.projects);
  const users = useAdminStore((s) => s.users);
  const { selected, current, notice, select, saved } = useSelection(projects);
  const members = (id: number): number => users.filter((u) => u.projects.includes(id)).length;
  return (
    <div className="admin-layout">
      <ListPanel
        title="Projects"
        newLabel="New project"
        onNew={() => select('new')}
        headers={['Name', 'Application identifier', 'Active', 'People']}
        rows={projects.map((p) => ({
          id: p.id,
          label: p.name,
          cells: [p.application_identifier, p.active ? 'yes' : 'no', String(members(p.id))],
        }))}
        selected={selected}
        onSelect={select}
      />
      {selected !== null && (
        <ProjectEditor
          key={current?.id ?? 'new'}
          project={current}
          notice={notice}
          onSaved={saved}
          onClose={() => select(null)}
        />
      )}
    </div>
  );
}

function ProjectEditor({
  project,
  notice,
  onSaved,
  onClose,
}: {
  project: AdminProject | undefined;
  notice: string | null;
  onSaved: (project: AdminProject, message: string) => void;
  onClose: () => void;
}): ReactElement {
  const putProject = useAdminStore((s) => s.putProject);
  const form = useAdminForm({
    ...(project ? { id: project.id } : {}),
    name: project?.name ?? '',
    application_identifier: project?.application_identifier ?? '',
    active: project?.active ?? true,
    ...(project ? { updated_at: project.updated_at } : {}),
  });
  const save = (): void => {
    void form.submit(adminProjectInput, async (input) => {
      const result = await serverCall('admin.projects.save', input);
      putProject(result.project);
      form.set('updated_at', result.project.updated_at);
      onSaved(result.project, `Saved ${result.project.name}.`);
    });
  };
  return (
    <EditorPanel
      title={project ? `Edit ${project.name}` : 'New project'}
      busy={form.busy}
      onSave={save}
      onClose={onClose}
      saved={notice}
    >
      <TextInput form={form} field="name" label="Name" />
      <TextInput
        form={form}
        field="application_identifier"
        label="Application identifier"
        hint="The identifier billing knows the project by."
      />
      <Toggle form={form} field="active" label="Active (can be billed)" />
      <ErrorMessage message={form.formError} />
    </EditorPanel>
  );
}
