import { useEffect, useId, useRef, useState } from 'react';
import type { FormEvent, ReactElement } from 'react';
import { ConfirmDialog } from '../../components/ConfirmDialog.js';
import { adminSchemas, type AdminToken } from '../../../../shared/adminApi.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { LabelledField } from '../../components/LabelledField.js';
import { describedBy } from '../../features/forms/FieldFrame.js';
import { fieldProblems, toBridgeError, type FieldErrors } from '../../bridge.js';
import { errorText, formatDateTime } from '../../format.js';
import { focusLost } from '../../focusLost.js';
import { serverCall } from '../serverBridge.js';
import { useServerStore } from '../store.js';
import { SecretOnce } from './SecretOnce.js';
import { useAdminStore } from './store.js';

/**
 * API tokens for programs that read the NEMO-compatible API (`Authorization: Token ...`). A
 * token acts as its person: only tokens of staff or admins can read the API.
 */
/** Whose a token is: their e-mail, or their username when they have none. */
const holder = (token: AdminToken): string => token.user_email || token.user_username;

export function TokensAdmin(): ReactElement {
  const id = useId();
  const tokens = useAdminStore((s) => s.tokens);
  const users = useAdminStore((s) => s.users);
  const setTokens = useAdminStore((s) => s.setTokens);
  const active = users.filter((u) => u.is_active);
  const [user, setUser] = useState<string>('');
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  /** Problems of the two fields (user, name), shown at them. */
  const [errors, setErrors] = useState<FieldErrors>({});
  const [secret, setSecret] = useState<{ token: string; email: string } | null>(null);
  const [revoking, setRevoking] = useState<number | null>(null);
  // A token revoked leaves the list with its Revoke button, where the dialog would give the
  // focus back: the list takes it (after the dialog's own effect, a child's, has run).
  const listHeading = useRef<HTMLHeadingElement>(null);
  const wasRevoking = useRef(false);
  useEffect(() => {
    const closed = wasRevoking.current && revoking === null;
    wasRevoking.current = revoking !== null;
    if (closed && focusLost()) listHeading.current?.focus();
  }, [revoking]);

  const fail = (err: unknown): void => {
    const bridgeError = useServerStore.getState().failed(toBridgeError(err));
    if (bridgeError.code !== 'unauthenticated') setError(errorText(bridgeError));
  };
  const showAtFields = (found: FieldErrors): void => {
    setErrors(found);
    const first = ['user', 'name'].find((field) => found[field]);
    if (first) document.getElementById(`${id}-${first}`)?.focus();
  };
  const reload = async (): Promise<void> => {
    setTokens((await serverCall('admin.tokens.list', {})).tokens);
  };

  const create = (e: FormEvent): void => {
    e.preventDefault();
    if (busy) return;
    setError(null);
    const found: FieldErrors = {};
    if (!user) found.user = ['Choose whose token it is.'];
    const named = adminSchemas['admin.tokens.create'].shape.name.safeParse(name);
    if (!named.success) found.name = named.error.issues.map((issue) => issue.message);
    showAtFields(found);
    if (Object.keys(found).length || !named.success) return;
    setBusy(true);
    serverCall('admin.tokens.create', { user: Number(user), name: named.data })
      .then(async (result) => {
        setSecret({ token: result.token, email: holder(result.info) });
        setName('');
        await reload();
      })
      .catch((err: unknown) => {
        // A refusal that names a field of this form (a person turned off meanwhile) goes there.
        const atFields = Object.fromEntries(
          Object.entries(fieldProblems(toBridgeError(err))).filter(
            ([field]) => field === 'user' || field === 'name',
          ),
        );
        if (Object.keys(atFields).length) showAtFields(atFields);
        else fail(err);
      })
      .finally(() => setBusy(false));
  };

  const revoke = (tokenId: number): void => {
    setBusy(true);
    serverCall('admin.tokens.revoke', { id: tokenId })
      .then(reload)
      .catch(fail)
      .finally(() => {
        setBusy(false);
        setRevoking(null);
      });
  };

  const role = (userId: number): string => users.find((u) => u.id === userId)?.role ?? '';
  return (
    <div className="admin-stack">
      {secret && (
        <SecretOnce
          title={`New API token for ${secret.email}`}
          secret={secret.token}
          usage={'Send it as the header "Authorization: Token <token>".'}
          onDone={() => setSecret(null)}
        />
      )}
      <form className="panel" noValidate onSubmit={create} aria-labelledby={`${id}-title`}>
        <h2 id={`${id}-title`}>New API token</h2>
        <div className="field-grid">
          <LabelledField id={`${id}-user`} label="For" messages={errors.user ?? []}>
            <select
              id={`${id}-user`}
              value={user}
              aria-invalid={errors.user ? true : undefined}
              aria-describedby={describedBy(errors.user && `${id}-user-messages`)}
              onChange={(e) => {
                setUser(e.target.value);
                setErrors(({ user: _, ...rest }) => rest);
              }}
            >
              <option value="">Choose a person…</option>
              {active.map((u) => (
                <option key={u.id} value={u.id}>
                  {`${u.email || u.username} (${u.role})`}
                </option>
              ))}
            </select>
          </LabelledField>
          <LabelledField id={`${id}-name`} label="What it is for" messages={errors.name ?? []}>
            <input
              id={`${id}-name`}
              value={name}
              autoComplete="off"
              aria-invalid={errors.name ? true : undefined}
              aria-describedby={describedBy(errors.name && `${id}-name-messages`)}
              onChange={(e) => {
                setName(e.target.value);
                setErrors(({ name: _, ...rest }) => rest);
              }}
            />
          </LabelledField>
        </div>
        <ErrorMessage message={error} />
        <div className="actions">
          {/* Not disabled while busy: that drops the focus to the page (create() waits). */}
          <button type="submit" className="primary" aria-disabled={busy || undefined}>
            Make token
          </button>
        </div>
      </form>
      <section className="panel" aria-labelledby={`${id}-list`}>
        <h2 id={`${id}-list`} ref={listHeading} tabIndex={-1}>
          API tokens
        </h2>
        {tokens.length === 0 ? (
          <p className="hint">No tokens yet.</p>
        ) : (
          <div className="table-scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">Starts with</th>
                  <th scope="col">Person</th>
                  <th scope="col">For</th>
                  <th scope="col">Made</th>
                  <th scope="col">Last used</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {tokens.map((t) => (
                  <tr key={t.id}>
                    <td className="code">{`${t.prefix}…`}</td>
                    <td>{`${holder(t)} (${role(t.user_id)})`}</td>
                    <td>{t.name}</td>
                    <td>{formatDateTime(t.created_at)}</td>
                    <td>{t.last_used_at ? formatDateTime(t.last_used_at) : 'never'}</td>
                    <td>
                      <button
                        type="button"
                        className="secondary"
                        aria-label={`Revoke token ${t.prefix}… of ${holder(t)}`}
                        onClick={() => setRevoking(t.id)}
                      >
                        Revoke
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <ConfirmDialog
        open={revoking !== null}
        title="Revoke this token?"
        confirmLabel="Revoke"
        busy={busy}
        onConfirm={() => revoking !== null && revoke(revoking)}
        onCancel={() => setRevoking(null)}
      >
        <p>Programs that use it are refused from now on.</p>
      </ConfirmDialog>
    </div>
  );
}
