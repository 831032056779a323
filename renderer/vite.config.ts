import { defineConfig } from 'vite';

const here = import.meta.dirname;

// Relative asset paths (base './') so the same build loads in Electron from
// app://labstation/index.html (electron/core/desktop/appScheme.ts) and from the station's and
// the server's HTTP listeners. JSX uses React's automatic runtime (no plugin needed).
export default defineConfig({
  root: here,
  base: './',
  oxc: { jsx: { runtime: 'automatic', importSource: 'react' } },
  build: {
    outDir: `${here}/../dist/renderer`,
    emptyOutDir: true,
    sourcemap: true,
    target: 'es2022',
    // bench.html is the page of `npm run bench:forms`; the app never links to it.
    rollupOptions: { input: { main: `${here}/index.html`, bench: `${here}/bench.html` } },
  },
});
