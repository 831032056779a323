import { BridgeError } from '../../bridge.js';

/**
 * The answers' problems of a refused booking, at their questions: the server names them under
 * `answers` (`['answers', 'experiment_title']`); other problems (the project, the times) are
 * left out, for the caller to show with their own fields.
 */
export function answerProblems(error: BridgeError): BridgeError {
  const problems = (error.details as { problems?: unknown } | undefined)?.problems;
  if (!Array.isArray(problems)) return error;
  const inAnswers = (problems as { path?: unknown }[])
    .filter((p) => Array.isArray(p.path) && p.path[0] === 'answers')
    .map((p) => ({ ...p, path: (p.path as unknown[]).slice(1) }));
  return new BridgeError(error.code, error.message, { problems: inAnswers });
}
