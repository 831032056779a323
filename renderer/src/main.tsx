import { StrictMode } from 'react';
import type { ReactElement } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/App.js';
import { getBridge } from './bridge.js';
import { ServerApp } from './server/ServerApp.js';
import { servedByServer } from './server/serverBridge.js';
import './styles/app.css';

// Take the token out of the address bar before anything renders.
getBridge();

// A page served over HTTP may come from a Labstation server (browser users) rather than a
// station: its /health says so. Electron (the preload) is always a station.
async function pickApp(): Promise<() => ReactElement> {
  if (window.labstation || !(await servedByServer())) return App;
  return ServerApp;
}

const root = document.getElementById('root');
if (root) {
  void pickApp().then((Chosen) => {
    createRoot(root).render(
      <StrictMode>
        <Chosen />
      </StrictMode>,
    );
  });
}
