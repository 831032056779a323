import type { ReactElement } from 'react';
import type { UserSummary } from '../../../../shared/api.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { useStaffStore } from '../../stores/staff.js';

interface OnBehalfFieldsProps {
  self: UserSummary;
  /** Id of the user to bill, as text; '' for the staff member themself. */
  forUser: string;
  onUser: (id: string) => void;
  remoteWork: boolean;
  onRemoteWork: (value: boolean) => void;
}

function fullName(u: UserSummary): string {
  const name = `${u.first_name} ${u.last_name}`.trim();
  return name ? `${name} (${u.username})` : u.username;
}

/** Staff only: enable on behalf of a qualified user, and mark the work as remote. */
export function OnBehalfFields(props: OnBehalfFieldsProps): ReactElement {
  const { self, forUser, onUser, remoteWork, onRemoteWork } = props;
  const users = useStaffStore((s) => s.users);
  const error = useStaffStore((s) => s.error);
  return (
    <fieldset className="staff-fields">
      <legend>Staff options</legend>
      <div className="field">
        <label htmlFor="enable-user">Enable for</label>
        <select id="enable-user" value={forUser} onChange={(e) => onUser(e.target.value)}>
          <option value="">{`Myself (${self.username})`}</option>
          {users
            .filter((u) => u.id !== self.id)
            .map((u) => (
              <option key={u.id} value={String(u.id)}>
                {fullName(u)}
              </option>
            ))}
        </select>
      </div>
      <ErrorMessage message={error} />
      <label className="choice">
        <input
          type="checkbox"
          checked={remoteWork}
          onChange={(e) => onRemoteWork(e.target.checked)}
        />
        <span>Remote work</span>
      </label>
    </fieldset>
  );
}
