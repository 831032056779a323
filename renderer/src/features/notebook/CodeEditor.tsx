import { useEffect, useRef } from 'react';
import type { ReactElement } from 'react';
import { json } from '@codemirror/lang-json';
import { linter, lintGutter } from '@codemirror/lint';
import { EditorState } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { basicSetup } from 'codemirror';
import { parseMetadataText } from '../../../../shared/metadata/index.js';
import { toDiagnostic } from './codeLint.js';

interface CodeEditorProps {
  /** The text the editor starts with; remount (key) to load another. */
  initial: string;
  onChange: (text: string) => void;
  label: string;
}

const theme = EditorView.theme({
  '&': {
    border: '1px solid #8a96a6',
    borderRadius: '6px',
    background: '#fff',
    fontSize: '0.95rem',
    minHeight: '16rem',
    maxHeight: '60vh',
  },
  '&.cm-focused': { outline: '3px solid #ffb020', outlineOffset: '2px' },
  '.cm-scroller': {
    fontFamily: "ui-monospace, 'Cascadia Mono', 'DejaVu Sans Mono', monospace",
    lineHeight: '1.5',
  },
  '.cm-content': { minHeight: '16rem' },
});

/**
 * The metadata JSON in CodeMirror 6 with JSON highlighting and the problems of
 * parseMetadataText as lint diagnostics at their line.
 *
 * The editor lives in a shadow root on purpose: CodeMirror then mounts its styles as a
 * constructed style sheet (adoptedStyleSheets) instead of a <style> element, which the page's
 * CSP (style-src 'self', no 'unsafe-inline') would block. No CSP change or nonce is needed.
 */
export function CodeEditor({ initial, onChange, label }: CodeEditorProps): ReactElement {
  const host = useRef<HTMLDivElement>(null);
  const changed = useRef(onChange);
  changed.current = onChange;

  useEffect(() => {
    const element = host.current;
    if (!element) return;
    const root = element.shadowRoot ?? element.attachShadow({ mode: 'open' });
    const parent = document.createElement('div');
    root.append(parent);
    const view = new EditorView({
      root,
      parent,
      state: EditorState.create({
        doc: initial,
        extensions: [
          basicSetup,
          json(),
          lintGutter(),
          linter(
            (v) => {
              const result = parseMetadataText(v.state.doc.toString());
              return result.problems.map((p) => toDiagnostic(v.state.doc, p));
            },
            { delay: 250 },
          ),
          theme,
          EditorView.contentAttributes.of({ 'aria-label': label }),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) changed.current(update.state.doc.toString());
          }),
        ],
      }),
    });
    return () => {
      view.destroy();
      parent.remove();
    };
    // The editor owns its text once created; a new `initial` comes with a new key.
  }, []);

  return <div ref={host} className="code-editor" data-testid="metadata-code" />;
}
