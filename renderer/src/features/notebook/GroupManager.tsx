import { useState } from 'react';
import type { ReactElement } from 'react';
import type { FieldGroup } from '../../../../shared/metadata/index.js';

interface GroupManagerProps {
  groups: FieldGroup[];
  onAdd: (name: string) => void;
  onRename: (id: number, name: string) => void;
  onRemove: (id: number) => void;
}

function GroupRow({
  group,
  onRename,
  onRemove,
}: {
  group: FieldGroup;
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
  return (
    <section className="group-manager" aria-label="Groups">
      <h3>Groups</h3>
      {groups.length > 0 && (
        <ul className="plain-list">
          {groups.map((group) => (
            <GroupRow
              key={`${group.id}-${group.name}`}
              group={group}
              onRename={(newName) => onRename(group.id, newName)}
              onRemove={() => onRemove(group.id)}
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
