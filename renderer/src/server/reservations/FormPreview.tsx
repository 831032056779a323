import { useEffect, useState } from 'react';
import type { ReactElement } from 'react';
import type { ReservationForm } from '../../../../shared/reservationApi.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { QuestionFormFields } from '../../features/forms/QuestionFormFields.js';
import { useQuestionForm } from '../../features/forms/useQuestionForm.js';
import { errorText } from '../../format.js';
import { useAdminStore } from '../admin/store.js';
import { serverCall } from '../serverBridge.js';
import { useServerStore } from '../store.js';
import { useReservationAdminStore } from './adminStore.js';
import { targetArgs, type TargetKey } from './store.js';

/**
 * The merged form of a booking, as the server builds it (admin.reservationQuestionSets.preview)
 * for a chosen tool or area and project: which sets apply, and their questions to try out.
 * Read again after every change of the sets.
 */
export function FormPreview(): ReactElement {
  const tools = useAdminStore((s) => s.tools);
  const projects = useAdminStore((s) => s.projects);
  const areas = useReservationAdminStore((s) => s.areas);
  const sets = useReservationAdminStore((s) => s.sets);
  const [target, setTarget] = useState<TargetKey | ''>(() =>
    tools[0] ? `tool:${tools[0].id}` : areas[0] ? `area:${areas[0].id}` : '',
  );
  const [project, setProject] = useState<number | null>(projects[0]?.id ?? null);
  const [result, setResult] = useState<{ key: string; form: ReservationForm } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const key = `${target}|${project ?? ''}`;

  useEffect(() => {
    if (target === '' || project === null) return;
    let current = true;
    setError(null);
    serverCall('admin.reservationQuestionSets.preview', { ...targetArgs(target), project })
      .then((form) => {
        if (current) setResult({ key: `${target}|${project}`, form });
      })
      .catch((failure: unknown) => {
        const err = useServerStore.getState().failed(failure);
        if (current && err.code !== 'unauthenticated') setError(errorText(err));
      });
    return () => {
      current = false;
    };
  }, [target, project, sets]);

  const shown = result?.key === key ? result.form : null;
  return (
    <section className="panel" aria-labelledby="form-preview-title">
      <h2 id="form-preview-title">Preview of the booking form</h2>
      <div className="field-grid">
        <div className="field">
          <label htmlFor="preview-target">Tool or area</label>
          <select
            id="preview-target"
            value={target}
            onChange={(e) => setTarget(e.target.value as TargetKey)}
          >
            {tools.length > 0 && (
              <optgroup label="Tools">
                {tools.map((t) => (
                  <option key={t.id} value={`tool:${t.id}`}>
                    {t.name}
                  </option>
                ))}
              </optgroup>
            )}
            {areas.length > 0 && (
              <optgroup label="Areas">
                {areas.map((a) => (
                  <option key={a.id} value={`area:${a.id}`}>
                    {a.name}
                  </option>
                ))}
              </optgroup>
            )}
          </select>
        </div>
        <div className="field">
          <label htmlFor="preview-project">Project</label>
          <select
            id="preview-project"
            value={project ?? ''}
            onChange={(e) => setProject(Number(e.target.value))}
          >
            {projects.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </div>
      </div>
      {(target === '' || project === null) && (
        <p className="hint">The preview needs a tool or an area and a project.</p>
      )}
      <ErrorMessage message={error} />
      {shown && (
        <div className="preview">
          <p role="status">
            {shown.sets.length === 0
              ? 'No question set applies: the booking asks no questions.'
              : `Question sets that apply: ${shown.sets.map((s) => s.name).join(', ')}.`}
          </p>
          <PreviewForm key={JSON.stringify(shown)} form={shown} />
        </div>
      )}
    </section>
  );
}

function PreviewForm({ form }: { form: ReservationForm }): ReactElement {
  const questions = useQuestionForm(form.questions);
  const accepted = questions.submitted && questions.problems.length === 0;
  return (
    <div className="preview-form">
      <QuestionFormFields form={questions} />
      <div className="actions">
        <button type="button" className="secondary" onClick={() => questions.submit()}>
          Check answers
        </button>
        <button type="button" className="secondary" onClick={() => questions.reset()}>
          Clear
        </button>
      </div>
      {accepted && (
        <p className="notice" role="status">
          These answers would be accepted.
        </p>
      )}
    </div>
  );
}
