import type { ReactElement } from 'react';
import { adminUserInput, type AdminUser } from '../../../../shared/adminApi.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { useServerStore } from '../store.js';
import { serverCall } from '../serverBridge.js';
import { IdChecklist, SelectInput, TextInput, Toggle } from './fields.js';
import { EditorPanel, ListPanel, useSelection } from './layout.js';
import { useAdminStore } from './store.js';
import { useAdminForm } from './useAdminForm.js';

const ROLE_LABELS = { admin: 'Admin', staff: 'Staff', user: 'User' } as const;

function fullName(u: AdminUser): string {
  return `${u.first_name} ${u.last_name}`.trim();
}

/** People: who they are, how they log on (PIN and badge at stations, password here), roles. */
export function UsersAdmin(): ReactElement {
  const users = useAdminStore((s) => s.users);
  const { selected, current, notice, select, saved } = useSelection(users);
  return (
    <div className="admin-layout">
      <ListPanel
        title="People"
        newLabel="New person"
        onNew={() => select('new')}
        headers={['Username', 'Name', 'E-mail', 'Role', 'Active']}
        rows={users.map((u) => ({
          id: u.id,
          label: u.username,
          cells: [fullName(u), u.email, ROLE_LABELS[u.role], u.is_active ? 'yes' : 'no'],
        }))}
        selected={selected}
        onSelect={select}
      />
      {selected !== null && (
        <UserEditor
          key={current?.id ?? 'new'}
          user={current}
          notice={notice}
          onSaved={saved}
          onClose={() => select(null)}
        />
      )}
    </div>
  );
}

function UserEditor({
  user,
  notice,
  onSaved,
  onClose,
}: {
  user: AdminUser | undefined;
  notice: string | null;
  onSaved: (user: AdminUser, message: string) => void;
  onClose: () => void;
}): ReactElement {
  const projects = useAdminStore((s) => s.projects);
  const tools = useAdminStore((s) => s.tools);
  const putUser = useAdminStore((s) => s.putUser);
  const form = useAdminForm({
    ...(user ? { id: user.id } : {}),
    username: user?.username ?? '',
    email: user?.email ?? '',
    first_name: user?.first_name ?? '',
    last_name: user?.last_name ?? '',
    badge_number: user?.badge_number ?? '',
    role: user?.role ?? 'user',
    is_active: user?.is_active ?? true,
    pin: '',
    password: '',
    projects: user?.projects ?? [],
    qualified_tools: user?.qualified_tools ?? [],
    // The record as loaded: a save of one changed elsewhere since is refused, not overwritten.
    ...(user ? { updated_at: user.updated_at } : {}),
  });

  const save = (): void => {
    void form.submit(adminUserInput, async (input) => {
      const result = await serverCall('admin.users.save', input);
      // A password changed ends every login of its account, this one too when it is one's own:
      // said so on the log-in screen, rather than "Your login has ended" at the next call.
      const me = useServerStore.getState().account;
      if (me !== null && result.user.id === me.id && input.password) {
        useServerStore
          .getState()
          .logout(
            'Saved: your password is changed, which ends your logins. Log in with the new one.',
          );
        return;
      }
      putUser(result.user);
      onSaved(result.user, `Saved ${result.user.username}.`);
      form.set('pin', '');
      form.set('password', '');
      form.set('updated_at', result.user.updated_at);
    });
  };

  return (
    <EditorPanel
      title={user ? `Edit ${user.username}` : 'New person'}
      busy={form.busy}
      onSave={save}
      onClose={onClose}
      saved={notice}
    >
      <div className="field-grid">
        <TextInput form={form} field="username" label="Username" />
        <TextInput form={form} field="email" label="E-mail" type="email" />
        <TextInput form={form} field="first_name" label="First name" />
        <TextInput form={form} field="last_name" label="Last name" />
        <TextInput
          form={form}
          field="badge_number"
          label="Badge number"
          hint="What the badge reader types; empty for none."
        />
        <SelectInput
          form={form}
          field="role"
          label="Role"
          options={[
            { value: 'user', label: 'User: uses tools, answers forms' },
            { value: 'staff', label: 'Staff: also operates for others, reads the API' },
            { value: 'admin', label: 'Admin: also manages the facility here' },
          ]}
        />
        <TextInput
          form={form}
          field="pin"
          label={user?.has_pin ? 'New PIN (empty: keep)' : 'PIN (4 to 12 digits)'}
          type="password"
          inputMode="numeric"
          autoComplete="new-password"
        />
        <TextInput
          form={form}
          field="password"
          label={
            user?.has_password ? 'New password (empty: keep)' : 'Password for this site (optional)'
          }
          type="password"
          autoComplete="new-password"
        />
      </div>
      <Toggle form={form} field="is_active" label="Active (can log on)" />
      <div className="field-grid">
        <IdChecklist
          form={form}
          field="projects"
          label="Projects"
          options={projects.map((p) => ({
            id: p.id,
            label: p.active ? p.name : `${p.name} (inactive)`,
          }))}
          empty="No projects yet."
        />
        <IdChecklist
          form={form}
          field="qualified_tools"
          label="Qualified on"
          options={tools.map((t) => ({ id: t.id, label: t.name }))}
          empty="No tools yet."
        />
      </div>
      <ErrorMessage message={form.formError} />
    </EditorPanel>
  );
}
