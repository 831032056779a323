import { useEffect, useMemo, useRef, useState } from 'react';
import type { ReactElement } from 'react';
import { groupedFields } from '../../../../shared/metadata/index.js';
import type { MetadataDoc } from '../../../../shared/metadata/index.js';
import type { EntryDraft } from './useEntryDraft.js';
import { FieldBuilderDialog } from './FieldBuilderDialog.js';
import { FieldInput } from './FieldInput.js';
import { GroupManager } from './GroupManager.js';
import { problemsByField } from './problems.js';

/** The field names in the order the builder shows them (group by group). */
function shownOrder(doc: MetadataDoc): string[] {
  return groupedFields(doc).flatMap((section) => section.fields.map((field) => field.name));
}

/** The id of the control of the field shown at `index` in that order. */
const controlId = (index: number): string => `nb-field-${index + 1}`;

/** The id of the control of the field `name` in the builder, or null when it has none. */
export function fieldControlId(doc: MetadataDoc, name: string): string | null {
  const at = shownOrder(doc).indexOf(name);
  return at === -1 ? null : controlId(at);
}

/** Builder mode: the fields in their groups with their inputs, Add field, and the groups. */
export function BuilderFields({ draft }: { draft: EntryDraft }): ReactElement {
  const { doc, actions } = draft;
  const [builderOpen, setBuilderOpen] = useState(false);
  const [refusal, setRefusal] = useState<string[]>([]);
  const problems = useMemo(() => problemsByField(doc), [doc]);
  const sections = groupedFields(doc);
  const groups = doc.notebook?.extra_fields_groups ?? [];
  const general = problems.general;
  const addButton = useRef<HTMLButtonElement>(null);
  // The field whose input takes the focus once the fields are drawn again, or (null) Add field:
  // a field just added (the builder it was made in has gone), or, when a removed field's trash
  // control has gone with it, the field after it, else the one before, else Add field.
  const focusField = useRef<{ name: string | null } | null>(null);
  let index = 0;

  useEffect(() => {
    const target = focusField.current;
    if (!target) return;
    focusField.current = null;
    const at = target.name === null ? -1 : shownOrder(doc).indexOf(target.name);
    (at === -1 ? addButton.current : document.getElementById(controlId(at)))?.focus();
  }, [doc]);

  /** Shows what refused a change, and passes it on. */
  const refuse = (refused: string[]): string[] => {
    setRefusal(refused);
    return refused;
  };

  const remove = (name: string): void => {
    const order = shownOrder(doc);
    const at = order.indexOf(name);
    const refused = actions.removeField(name);
    setRefusal(refused);
    if (refused.length === 0) focusField.current = { name: order[at + 1] ?? order[at - 1] ?? null };
  };

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
            const id = controlId(index);
            index += 1;
            return (
              <FieldInput
                key={field.name}
                field={field}
                id={id}
                messages={problems.fields.get(field.name) ?? []}
                onValue={(value) => setRefusal(actions.setValue(field.name, value))}
                onUnit={(unit) => setRefusal(actions.setUnit(field.name, unit))}
                onRemove={() => remove(field.name)}
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
        <button
          ref={addButton}
          type="button"
          className="secondary"
          onClick={() => setBuilderOpen(true)}
        >
          Add field
        </button>
      </div>
      <GroupManager
        groups={groups}
        onAdd={actions.addGroup}
        onRename={(id, name) => refuse(actions.renameGroup(id, name))}
        onRemove={(id) => refuse(actions.removeGroup(id))}
      />
      <FieldBuilderDialog
        open={builderOpen}
        groups={groups}
        onAdd={(name, fieldDraft) => {
          const refused = actions.addField(name, fieldDraft);
          if (refused.length === 0) {
            focusField.current = { name };
            setBuilderOpen(false);
          }
          return refused;
        }}
        onClose={() => setBuilderOpen(false)}
      />
    </div>
  );
}
