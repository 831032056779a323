import { useRef, useState } from 'react';
import type { ReactElement } from 'react';
import {
  serviceAccountCreate,
  serviceAccountPatch,
  type ServiceAccountOut,
} from '../../../../shared/harvest/management.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { formatDateTime } from '../../format.js';
import { EditorPanel, ListPanel, useSelection } from '../admin/layout.js';
import { SecretOnce } from '../admin/SecretOnce.js';
import { serverCall } from '../serverBridge.js';
import { DeleteRecord } from './DeleteRecord.js';
import { CheckControl, TextControl } from './formFields.js';
import { useHarvestAdminStore } from './store.js';
import { useResourceForm } from './useResourceForm.js';

/**
 * Service accounts: the stations that harvest. Each syncs with its own key, shown once when
 * the account is made (the server keeps only its hash).
 */
export function ServiceAccountsAdmin(): ReactElement {
  const accounts = useHarvestAdminStore((s) => s.serviceAccounts);
  const instruments = useHarvestAdminStore((s) => s.instruments);
  const { selected, current, notice, select, saved } = useSelection(accounts);
  const [secret, setSecret] = useState<{ name: string; key: string } | null>(null);
  const [deleted, setDeleted] = useState<string | null>(null);
  const runs = (id: number): string =>
    instruments
      .filter((i) => i.service_account_id === id)
      .map((i) => i.name)
      .join(', ');
  return (
    <div className="admin-stack">
      {secret && (
        <SecretOnce
          title={`Key of service account ${secret.name}`}
          secret={secret.key}
          usage={`Give it to the station: labstation station --data DIR --server ${window.location.origin}/ --key <key>, or enter it in the station's settings.`}
          onDone={() => setSecret(null)}
        />
      )}
      {deleted && (
        <p className="notice" role="status">
          {deleted}
        </p>
      )}
      <div className="admin-layout">
        <ListPanel
          title="Service accounts"
          newLabel="New service account"
          onNew={() => select('new')}
          headers={['Name', 'Runs', 'Enabled', 'Last seen']}
          rows={accounts.map((a) => ({
            id: a.id,
            label: a.name,
            cells: [
              runs(a.id),
              a.enabled ? 'yes' : 'no',
              a.last_seen_at ? formatDateTime(a.last_seen_at) : 'never',
            ],
          }))}
          selected={selected}
          onSelect={(id) => {
            setDeleted(null);
            select(id);
          }}
        />
        {selected !== null && (
          <ServiceAccountEditor
            key={current?.id ?? 'new'}
            account={current}
            notice={notice}
            onSaved={(account, message, key) => {
              saved(account, message);
              if (key) setSecret({ name: account.name, key });
            }}
            onDeleted={(message) => {
              select(null);
              setDeleted(message);
            }}
            onClose={() => select(null)}
          />
        )}
      </div>
    </div>
  );
}

function ServiceAccountEditor({
  account,
  notice,
  onSaved,
  onDeleted,
  onClose,
}: {
  account: ServiceAccountOut | undefined;
  notice: string | null;
  onSaved: (account: ServiceAccountOut, message: string, key?: string) => void;
  onDeleted: (message: string) => void;
  onClose: () => void;
}): ReactElement {
  const put = useHarvestAdminStore((s) => s.put);
  const drop = useHarvestAdminStore((s) => s.drop);
  // The record as this editor loaded it (or last saved it): a save refused if another admin
  // changed it meanwhile.
  const loaded = useRef(account);
  const form = useResourceForm({
    name: account?.name ?? '',
    description: account?.description ?? '',
    enabled: account?.enabled ?? true,
  });
  const v = form.values;

  const save = (): void => {
    if (account) {
      void form.submit(serviceAccountPatch, v, async (parsed) => {
        const { item } = await serverCall('admin.serviceAccounts.update', {
          ...parsed,
          id: account.id,
          loaded: loaded.current,
        });
        loaded.current = item;
        put('serviceAccounts', item);
        onSaved(item, `Saved ${item.name}.`);
      });
    } else {
      void form.submit(serviceAccountCreate, v, async (parsed) => {
        const { item, key } = await serverCall('admin.serviceAccounts.create', parsed);
        put('serviceAccounts', item);
        onSaved(item, `Created ${item.name}.`, key);
      });
    }
  };

  const remove = (): void => {
    if (!account) return;
    void form.run(async () => {
      await serverCall('admin.serviceAccounts.delete', { id: account.id });
      drop('serviceAccounts', account.id);
      onDeleted(`Deleted service account ${account.name}.`);
    });
  };

  return (
    <EditorPanel
      title={account ? `Edit ${account.name}` : 'New service account'}
      busy={form.busy}
      onSave={save}
      onClose={onClose}
      saved={notice}
      saveLabel={account ? 'Save' : 'Create and show its key'}
    >
      <TextControl
        form={form}
        path="name"
        label="Name"
        hint="The station's name, e.g. the PC beside the instrument."
        value={v.name}
        onChange={(value) => form.set('name', value)}
      />
      <TextControl
        form={form}
        path="description"
        label="Description"
        value={v.description}
        onChange={(value) => form.set('description', value)}
      />
      <CheckControl
        form={form}
        path="enabled"
        label="Enabled (may sync)"
        checked={v.enabled}
        onChange={(checked) => form.set('enabled', checked)}
      />
      {account && (
        <div className="actions">
          <DeleteRecord what={`service account ${account.name}`} busy={form.busy} onDelete={remove}>
            <p>
              Only an account that runs no instrument and never synced records can be deleted;
              otherwise disable it.
            </p>
          </DeleteRecord>
        </div>
      )}
      <ErrorMessage message={form.formError} />
    </EditorPanel>
  );
}
