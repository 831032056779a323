/**
 * The preload: exposes exactly the typed contract of shared/api.ts as `window.labstation`,
 * nothing else (no ipcRenderer, no Node). Sandboxed preloads are CommonJS, hence .cts.
 */
import electron = require('electron');
import type { ApiName, CoreEvent, LabstationPreload, RpcEnvelope } from '../shared/api.js';

const { contextBridge, ipcRenderer } = electron;

const preload: LabstationPreload = {
  invoke: (name: ApiName, args: unknown) =>
    ipcRenderer.invoke('labstation:call', name, args) as Promise<RpcEnvelope>,
  subscribe(listener: (event: CoreEvent) => void) {
    const handler = (_event: electron.IpcRendererEvent, payload: CoreEvent): void =>
      listener(payload);
    ipcRenderer.on('labstation:event', handler);
    return () => {
      ipcRenderer.removeListener('labstation:event', handler);
    };
  },
};

contextBridge.exposeInMainWorld('labstation', preload);
