import { useMemo, useState } from 'react';
import type { ReactElement } from 'react';
import { groupedFields } from '../../../../shared/metadata/index.js';
import type { EntryDraft } from './useEntryDraft.js';
import { FieldBuilderDialog } from './FieldBuilderDialog.js';
import { FieldInput } from './FieldInput.js';
import { GroupManager } from './GroupManager.js';
import { problemsByField } from './problems.js';

/** Builder mode: the fields in their groups with their inputs, Add field, and the groups. */
export function BuilderFields({ draft }: { draft: EntryDraft }): ReactElement {
  const { doc, actions } = draft;
  const [builderOpen, setBuilderOpen] = useState(false);
  const [refusal, setRefusal] = useState<string[]>([]);
  const problems = useMemo(() => problemsByField(doc), [doc]);
  const sections = groupedFields(doc);
  const groups = doc.notebook?.extra_fields_groups ?? [];
  const general = problems.general;
  let index = 0;

  return (
    <div className="builder">
      {general.length > 0 && (
        <ul className="messages" aria-label="Metadata problems">
          {general.map((m) => (
            <li key={m.text}>{m.text}</li>
          ))}
        </ul>
      )}
      {sections.length === 0 && <p className="hint">No fields yet. Add one with Add field.</p>}
      {sections.map((section) => (
        <fieldset
          key={section.group ? `group-${section.group.id}` : 'ungrouped'}
          className="group field-section"
        >
          <legend>{section.group ? section.group.name : 'Fields without a group'}</legend>
          {section.fields.length === 0 && <p className="hint">No fields in this group.</p>}
          {section.fields.map((field) => {
            index += 1;
            return (
              <FieldInput
                key={field.name}
                field={field}
                id={`nb-field-${index}`}
                messages={problems.fields.get(field.name) ?? []}
                onValue={(value) => setRefusal(actions.setValue(field.name, value))}
                onUnit={(unit) => setRefusal(actions.setUnit(field.name, unit))}
                onRemove={() => setRefusal(actions.removeField(field.name))}
              />
            );
          })}
        </fieldset>
      ))}
      {refusal.length > 0 && (
        <ul className="messages" role="alert">
          {refusal.map((m) => (
            <li key={m}>{m}</li>
          ))}
        </ul>
      )}
      <div className="actions">
        <button type="button" className="secondary" onClick={() => setBuilderOpen(true)}>
          Add field
        </button>
      </div>
      <GroupManager
        groups={groups}
        onAdd={actions.addGroup}
        onRename={(id, name) => setRefusal(actions.renameGroup(id, name))}
        onRemove={(id) => setRefusal(actions.removeGroup(id))}
      />
      <FieldBuilderDialog
        open={builderOpen}
        groups={groups}
        onAdd={(name, fieldDraft) => {
          const refused = actions.addField(name, fieldDraft);
          if (refused.length === 0) setBuilderOpen(false);
          return refused;
        }}
        onClose={() => setBuilderOpen(false)}
      />
    </div>
  );
}
