import { useEffect, useState } from 'react';
import type { FormEvent, ReactElement } from 'react';
import type { ApiResult, ProjectSummary, SessionInfo, ToolStatus } from '../../../../shared/api.js';
import { call } from '../../bridge.js';
import { errorText, formatDateTime } from '../../format.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { QuestionFormFields } from '../forms/QuestionFormFields.js';
import { dropDrafts, readDraft, writeDraft } from '../forms/drafts.js';
import { useQuestionForm } from '../forms/useQuestionForm.js';
import { useStaffStore } from '../../stores/staff.js';
import { useStationStore } from '../../stores/station.js';
import { OnBehalfFields } from './OnBehalfFields.js';
import { useToolAction } from './useToolAction.js';
import { RequiredStar } from '../forms/Title.js';

interface EnableFormProps {
  session: SessionInfo;
  status: ToolStatus;
  /** What happened, for the tab to say; `done` false: the tool was not enabled. */
  onDone: (message: string, done?: boolean) => void;
}

type CurrentReservation = ApiResult<'reservations.current'>;

const NO_RESERVATION: CurrentReservation = {
  reservation: null,
  answers: {},
  matched: [],
  project: null,
};

/**
 * Pick a project, answer the pre-usage questions, enable the tool. The reservation on now for
 * the person billed (from the station's synced copy) fills in the answers whose question names
 * match, and its project; the form is built once that is known.
 */
export function EnableForm(props: EnableFormProps): ReactElement {
  // Whom the usage is for and whether it is remote work stay with the typed answers while
  // staff look at another tab (drafts.ts), or the form came back billing themselves.
  const who = `enable:${props.session.user.id}:${props.status.tool.name}`;
  const [forUser, setForUserState] = useState(() => readDraft<string>(`${who}:for`) ?? '');
  const [remoteWork, setRemoteWorkState] = useState(
    () => readDraft<boolean>(`${who}:remote`) ?? false,
  );
  const setForUser = (id: string): void => {
    setForUserState(id);
    writeDraft(`${who}:for`, id);
  };
  const setRemoteWork = (value: boolean): void => {
    setRemoteWorkState(value);
    writeDraft(`${who}:remote`, value);
  };
  const [current, setCurrent] = useState<{ user: string; found: CurrentReservation } | null>(null);

  useEffect(() => {
    let live = true;
    void call('reservations.current', forUser ? { user: Number(forUser) } : {})
      .catch(() => NO_RESERVATION)
      .then((found) => {
        if (live) setCurrent({ user: forUser, found });
      });
    return () => {
      live = false;
    };
  }, [forUser]);

  if (current === null) {
    return (
      <section className="panel" aria-busy="true">
        <h2>Enable {props.status.tool.name}</h2>
        <p>Loading…</p>
      </section>
    );
  }
  const fills = current.found.matched.length > 0 || current.found.project !== null;
  return (
    <EnableFormBody
      // A new form for another person billed (their own drafts), or when another reservation
      // fills it: typed answers stay otherwise.
      key={`${forUser}:${fills ? (current.found.reservation?.uuid ?? 'none') : 'none'}`}
      {...props}
      forUser={forUser}
      onForUser={setForUser}
      remoteWork={remoteWork}
      onRemoteWork={setRemoteWork}
      // Another person chosen and their reservation not read yet: say nothing of the last one's.
      current={current.user === forUser ? current.found : NO_RESERVATION}
    />
  );
}

interface EnableFormBodyProps extends EnableFormProps {
  forUser: string;
  onForUser: (id: string) => void;
  remoteWork: boolean;
  onRemoteWork: (value: boolean) => void;
  current: CurrentReservation;
}

function EnableFormBody({
  session,
  status,
  onDone,
  forUser,
  onForUser,
  remoteWork,
  onRemoteWork,
  current,
}: EnableFormBodyProps): ReactElement {
  const tool = status.tool;
  const isStaff = session.user.is_staff;
  // Typed answers and the project chosen stay while the person looks at another tab.
  // A reservation matched since is a new start (its answers fill the form).
  const draft = `enable:${session.user.id}:${tool.name}:${forUser}:${current.matched.length > 0 ? 'reserved' : 'open'}`;
  const form = useQuestionForm(
    tool.pre_usage_questions,
    current.matched.length > 0 ? current.answers : undefined,
    `${draft}:answers`,
  );
  const showStatus = useStationStore((s) => s.showStatus);
  const users = useStaffStore((s) => s.users);
  const loadUsers = useStaffStore((s) => s.loadUsers);
  const action = useToolAction();
  const [project, setProjectState] = useState(
    () =>
      readDraft<string>(`${draft}:project`) ?? (current.project ? String(current.project.id) : ''),
  );
  const setProject = (value: string): void => {
    setProjectState(value);
    writeDraft(`${draft}:project`, value);
  };
  const [projectMissing, setProjectMissing] = useState(false);

  useEffect(() => {
    if (isStaff) void loadUsers(tool.name);
  }, [isStaff, loadUsers, tool.name]);

  const billed = users.find((u) => String(u.id) === forUser);
  const projects: ProjectSummary[] = billed ? billed.projects : session.projects;
  const onlyProject = projects.length === 1 ? projects[0] : undefined;
  const chosenProject = projects.find((p) => String(p.id) === project) ?? onlyProject;

  const onSubmit = (e: FormEvent): void => {
    e.preventDefault();
    // Enter in a field while the call is under way (the button is only aria-disabled).
    if (action.busy) return;
    const answers = form.submit({ focus: chosenProject !== undefined });
    setProjectMissing(!chosenProject);
    if (!chosenProject) {
      document.getElementById('enable-project')?.focus();
      return;
    }
    if (!answers) return;
    void action.run(
      async () => {
        await call('toolControl.enable', {
          tool: tool.name,
          project: chosenProject.id,
          answers,
          ...(billed ? { user: billed.id } : {}),
          ...(isStaff ? { remoteWork } : {}),
        });
        dropDrafts(`enable:${session.user.id}:`);
        await showStatus(() => call('toolControl.status', { tool: tool.name }));
        onDone(`${tool.name} is enabled${billed ? ` for ${billed.username}` : ''}.`);
      },
      (error) => {
        // Its own answers reported a problem that shut the tool down: the report is filed and
        // nothing started. This form goes with the tool's new state, its error with it: the
        // tab says it.
        if (error.code === 'tool_shutdown') {
          // Filed: what was typed goes, the report's answer with it (kept, staff clearing the
          // shutdown would find it answered again, and one more Enable filed it once more).
          if ((error.details as { reported?: unknown } | undefined)?.reported === true) {
            dropDrafts(`enable:${session.user.id}:`);
          }
          onDone(errorText(error), false);
          return true;
        }
        return form.showServerProblems(error);
      },
    );
  };

  return (
    <form className="panel" noValidate onSubmit={onSubmit} aria-labelledby="enable-title">
      <h2 id="enable-title">Enable {tool.name}</h2>
      {isStaff && (
        <OnBehalfFields
          self={session.user}
          forUser={forUser}
          onUser={onForUser}
          remoteWork={remoteWork}
          onRemoteWork={onRemoteWork}
        />
      )}
      {projects.length === 0 ? (
        <p className="error" role="alert">
          {billed ? `${billed.username} has` : 'You have'} no active project to charge.
        </p>
      ) : (
        <div className={projectMissing && !chosenProject ? 'field invalid' : 'field'}>
          <label htmlFor="enable-project">
            Project
            <RequiredStar />
          </label>
          <select
            id="enable-project"
            aria-required
            value={chosenProject ? String(chosenProject.id) : ''}
            aria-invalid={(projectMissing && !chosenProject) || undefined}
            aria-describedby="enable-project-messages"
            onChange={(e) => setProject(e.target.value)}
          >
            {!onlyProject && <option value="">Choose a project…</option>}
            {projects.map((p) => (
              <option key={p.id} value={String(p.id)}>
                {p.application_identifier ? `${p.name} (${p.application_identifier})` : p.name}
              </option>
            ))}
          </select>
          <ul id="enable-project-messages" className="messages">
            {projectMissing && !chosenProject && <li>Choose a project.</li>}
          </ul>
        </div>
      )}
      {current.reservation && (
        <p className="notice" role="status">
          {`Reservation ${formatDateTime(current.reservation.start)} to ${formatDateTime(
            current.reservation.end,
          )}`}
          {current.matched.length > 0
            ? `: its answers are filled in (${current.matched.join(', ')}). Check them before enabling.`
            : '.'}
        </p>
      )}
      <h3>Pre-usage questions</h3>
      <QuestionFormFields form={form} />
      <ErrorMessage message={action.error} />
      <div className="actions">
        {/* aria-disabled while busy, not disabled: a disabled button drops the focus to the
            page, where a failed Enable left a keyboard user (onSubmit ignores a press while busy). */}
        <button
          type="submit"
          className="primary"
          disabled={projects.length === 0}
          aria-disabled={action.busy || undefined}
        >
          {action.busy ? 'Enabling…' : 'Enable'}
        </button>
      </div>
    </form>
  );
}
