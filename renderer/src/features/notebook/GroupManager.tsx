import { useId, useState } from 'react';
import type { ReactElement } from 'react';
import type { FieldGroup } from '../../../../shared/metadata/index.js';
import { useFocusAfterRender } from '../../components/useFocusAfterRender.js';

interface GroupManagerProps {
  groups: FieldGroup[];
  onAdd: (name: string) => void;
  /** Each returns what refused the change: nothing when it was made. */
  onRename: (id: number, name: string) => string[];
  onRemove: (id: number) => string[];
}

function GroupRow({
  group,
  inputId,
  onRename,
  onRemove,
}: {
  group: FieldGroup;
  inputId: string;
  onRename: (name: string) => void;
  onRemove: () => void;
}): ReactElement {
  const [name, setName] = useState(group.name);
  const changed = name.trim() !== '' && name !== group.name;
  return (
    <li>
      {/* A form, so that Enter in the name renames, as Enter in "New group name" adds. */}
      <form
        className="control-row"
        onSubmit={(e) => {
          e.preventDefault();
          if (changed) onRename(name.trim());
        }}
      >
        <input
          id={inputId}
          type="text"
          aria-label={`Name of group ${group.name}`}
          value={name}
          onChange={(e) => setName(e.target.value)}
        />
        <button
          type="submit"
          className="secondary"
          aria-label={`Rename group ${group.name}`}
          disabled={!changed}
        >
          Rename
        </button>
        <button
          type="button"
          className="secondary"
          aria-label={`Remove group ${group.name}`}
          onClick={onRemove}
        >
          Remove
        </button>
      </form>
    </li>
  );
}

/** Groups of fields: add, rename, remove (a removed group's fields stay, ungrouped). */
export function GroupManager({
  groups,
  onAdd,
  onRename,
  onRemove,
}: GroupManagerProps): ReactElement {
  const [name, setName] = useState('');
  const stem = useId();
  const inputId = (id: number): string => `${stem}-group-${id}`;
  const newNameId = `${stem}-new`;
  // A renamed group's row is made anew (its key holds the name) and a removed one is gone, each
  // with the focus in it: the focus goes to the renamed group's name, or to the next group's,
  // else the one before, else New group name. null: nothing to do.
  const focusAfter = useFocusAfterRender(groups);

  const remove = (id: number): void => {
    const at = groups.findIndex((g) => g.id === id);
    const next = groups[at + 1] ?? groups[at - 1];
    if (onRemove(id).length === 0) focusAfter(next ? inputId(next.id) : newNameId);
  };

  return (
    <section className="group-manager" aria-label="Groups">
      <h3>Groups</h3>
      {groups.length > 0 && (
        <ul className="plain-list">
          {groups.map((group) => (
            <GroupRow
              key={`${group.id}-${group.name}`}
              group={group}
              inputId={inputId(group.id)}
              onRename={(newName) => {
                if (onRename(group.id, newName).length === 0) {
                  focusAfter(inputId(group.id));
                }
              }}
              onRemove={() => remove(group.id)}
            />
          ))}
        </ul>
      )}
      <form
        className="control-row"
        onSubmit={(e) => {
          e.preventDefault();
          if (name.trim() === '') return;
          onAdd(name.trim());
          setName('');
        }}
      >
        <input
          id={newNameId}
          type="text"
          aria-label="New group name"
          placeholder="New group name"
          value={name}
          onChange={(e) => setName(e.target.value)}
        />
        <button type="submit" className="secondary" disabled={name.trim() === ''}>
          Add group
        </button>
      </form>
    </section>
  );
}
