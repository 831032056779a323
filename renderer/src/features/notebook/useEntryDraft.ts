import { useEffect, useMemo, useState } from 'react';
import {
  addField,
  addGroup,
  parseMetadataText,
  removeField,
  removeGroup,
  renameGroup,
  serializeMetadata,
  setFieldUnit,
  setFieldValue,
  toNotebook,
  validateMetadata,
} from '../../../../shared/metadata/index.js';
import type {
  EditResult,
  FieldDraft,
  LocatedProblem,
  MetadataDoc,
  MetadataProblem,
} from '../../../../shared/metadata/index.js';
import type { NotebookEntryView } from '../../../../shared/notebookApi.js';
import { toBridgeError } from '../../bridge.js';
import { errorText } from '../../format.js';
import { dropDrafts, readDraft, writeDraft } from '../forms/drafts.js';
import { useNotebookStore } from '../../stores/notebook.js';
import { shortMessage } from './problems.js';
import { fieldLabel, parseTags } from './words.js';

export type EditorMode = 'builder' | 'code';

interface KeptDraft {
  title: string;
  body: string;
  tags: string;
  doc: MetadataDoc;
  mode: EditorMode;
  code: string;
}

/** Where an entry's edit drafts are kept (drafts.ts); dropped when saved or given up. */
export function entryDraftPrefix(id: number): string {
  return `notebook:${id}:`;
}

/** The draft that says an entry is being edited (EntryPanel): true while it is. */
export function entryEditingKey(id: number): string {
  return `${entryDraftPrefix(id)}editing`;
}

export interface SaveError {
  message: string;
  conflict: boolean;
  /** The control it is about, marked and given the focus: the title, or a field by name. */
  at?: 'title' | { field: string };
}

/** What the title breaks, as the other forms name a field ("Title: must not be empty"). */
function titleError(title: string): SaveError | null {
  return title.trim() === ''
    ? { message: 'Title: must not be empty', conflict: false, at: 'title' }
    : null;
}

/**
 * A number field whose value, typed in this editor, is no number ("2,75", "1e"): not saved (it
 * would be stored as that text), said naming the field. A value stored so already (imported,
 * say) does not stop the rest of the entry from being saved.
 */
function typedNotANumber(doc: MetadataDoc, opened: MetadataDoc): SaveError | null {
  for (const problem of validateMetadata(doc)) {
    const [where, name, property] = problem.path;
    if (problem.code !== 'not_a_number' || where !== 'extra_fields') continue;
    if (typeof name !== 'string' || property !== 'value') continue;
    const value = doc.fields.find((f) => f.name === name)?.value;
    if (opened.fields.find((f) => f.name === name)?.value === value) continue;
    return {
      message: `${fieldLabel(name)}: ${shortMessage(problem)}`,
      conflict: false,
      at: { field: name },
    };
  }
  return null;
}

/** A refusal of the core that names the title ("title: must not be empty"), at the title. */
function refusedTitle(details: unknown): SaveError | null {
  const problems = (details as { problems?: unknown } | undefined)?.problems;
  if (!Array.isArray(problems)) return null;
  const problem = problems.find((p): p is string => typeof p === 'string' && /^title: /.test(p));
  return problem
    ? { message: `Title: ${problem.slice('title: '.length)}`, conflict: false, at: 'title' }
    : null;
}

/** What the code text holds now: the document, or why it cannot become one. */
function readCode(code: string): { doc: MetadataDoc | null; problems: LocatedProblem[] } {
  const result = parseMetadataText(code);
  return { doc: result.ok ? result.doc : null, problems: result.problems };
}

/**
 * The edit-mode draft of one entry: title, tags, main text and the metadata, edited in the
 * builder or as JSON. Switching modes never drops data: builder -> code writes the document
 * out; code -> builder happens only when the text is a document (else the text stays and its
 * problems show).
 */
export function useEntryDraft(
  entry: NotebookEntryView,
  initialDoc: MetadataDoc,
  /**
   * The stored metadata's JSON when it no longer reads: edited as JSON from the start, and left
   * as stored by a save that did not change it (the title or tags alone can still be changed).
   */
  storedText?: string,
) {
  // What is typed stays while the person looks at another tab (drafts.ts): the editor leaves
  // the screen then, and its state with it.
  const key = `${entryDraftPrefix(entry.id)}${entry.version}`;
  const [kept] = useState(() => readDraft<KeptDraft>(key));
  const [title, setTitle] = useState(kept?.title ?? entry.title);
  const [body, setBody] = useState(kept?.body ?? entry.body);
  const [tags, setTags] = useState(kept?.tags ?? entry.tags.join(', '));
  const [doc, setDoc] = useState(kept?.doc ?? initialDoc);
  const [mode, setMode] = useState<EditorMode>(
    kept?.mode ?? (storedText === undefined ? 'builder' : 'code'),
  );
  const [code, setCode] = useState(kept?.code ?? storedText ?? '');
  useEffect(
    () => writeDraft(key, { title, body, tags, doc, mode, code } satisfies KeptDraft),
    [key, title, body, tags, doc, mode, code],
  );
  /** Bumped each time code mode opens, to give the editor a fresh start. */
  const [codeRevision, setCodeRevision] = useState(0);
  const [blocked, setBlocked] = useState<LocatedProblem[] | null>(null);
  const [saveError, setSaveError] = useState<SaveError | null>(null);
  const [saving, setSaving] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);

  const codeProblems = useMemo(
    () => (mode === 'code' ? readCode(code).problems : []),
    [mode, code],
  );

  /** Applies an operation's result; returns its problems in words when it was refused. */
  const apply = (result: EditResult): string[] => {
    if (!result.ok) return result.problems.map((p: MetadataProblem) => p.message);
    setDoc(result.doc);
    return [];
  };

  const actions = {
    setTitle: (text: string) => {
      setTitle(text);
      // What the title was refused for goes as it is mended.
      setSaveError((shown) => (shown?.at === 'title' ? null : shown));
    },
    setBody,
    setTags,
    setValue: (name: string, value: unknown) => apply(setFieldValue(doc, name, value)),
    setUnit: (name: string, unit: string) => apply(setFieldUnit(doc, name, unit)),
    removeField: (name: string) => apply(removeField(doc, name)),
    addField: (name: string, draft: FieldDraft) => apply(addField(doc, name, draft)),
    addGroup: (name: string) => {
      const result = addGroup(doc, name);
      if (result.ok) setDoc(result.doc);
    },
    renameGroup: (id: number, name: string) => apply(renameGroup(doc, id, name)),
    removeGroup: (id: number) => apply(removeGroup(doc, id)),
    setDisplayMainText: (display: boolean) => {
      const notebook = { ...(doc.notebook ?? { unknown: [] }), display_main_text: display };
      setDoc({ ...doc, notebook });
    },
    setCode: (text: string) => {
      setCode(text);
      setBlocked(null);
    },
    toCode: () => {
      setCode(serializeMetadata(doc));
      setCodeRevision((n) => n + 1);
      setBlocked(null);
      setMode('code');
    },
    /** Back to the builder, unless the text is not a document: then it stays, with why. */
    toBuilder: (): boolean => {
      const read = readCode(code);
      if (!read.doc) {
        setBlocked(read.problems);
        return false;
      }
      setDoc(read.doc);
      setBlocked(null);
      setMode('builder');
      return true;
    },
    async save(): Promise<boolean> {
      // What an earlier attempt was refused for is no longer the news, whatever stops this one.
      setSaveError(null);
      let metadataDoc: MetadataDoc | undefined = doc;
      if (mode === 'code' && storedText !== undefined && code === storedText) {
        metadataDoc = undefined; // left as stored
      } else if (mode === 'code') {
        const read = readCode(code);
        if (!read.doc) {
          setBlocked(read.problems);
          return false;
        }
        metadataDoc = read.doc;
      }
      const refused =
        titleError(title) ?? (metadataDoc ? typedNotANumber(metadataDoc, initialDoc) : null);
      if (refused) {
        setSaveError(refused);
        return false;
      }
      setSaving(true);
      try {
        await useNotebookStore.getState().update({
          id: entry.id,
          version: entry.version,
          title: title.trim(),
          body,
          tags: parseTags(tags),
          metadata: metadataDoc && toNotebook(metadataDoc),
        });
        dropDrafts(entryDraftPrefix(entry.id));
        return true;
      } catch (error) {
        const e = toBridgeError(error);
        const atTitle = e.code === 'bad_request' ? refusedTitle(e.details) : null;
        if (atTitle) {
          setSaveError(atTitle);
          return false;
        }
        setSaveError({
          conflict: e.code === 'conflict',
          message:
            e.code === 'conflict'
              ? `This entry was changed elsewhere since you opened it (you started from version ${entry.version}). Your changes are still here and were not saved: copy what you need, then reload the saved version.`
              : errorText(e),
        });
        return false;
      } finally {
        setSaving(false);
      }
    },
    setNotice,
  };

  return {
    title,
    body,
    tags,
    doc,
    mode,
    code,
    codeRevision,
    codeProblems,
    blocked,
    saveError,
    saving,
    notice,
    actions,
  };
}

export type EntryDraft = ReturnType<typeof useEntryDraft>;
