/**
 * Holds one answer of the core in the browser: the call is made and answered at once, but the
 * page gets the answer only when the test lets it go. For tests of answers that land out of
 * order (a read asked for first, answered last).
 */
import type { Page, Request } from '@playwright/test';

export interface HeldAnswer {
  /** The held call, once it is made. */
  request: Promise<Request>;
  /** Lets the answer go, and resolves once the page has had it (two frames after it landed). */
  land: () => Promise<void>;
}

/**
 * Holds the answer of the first call to `url` (a glob) for which `pick` (given the call's JSON
 * body) is true; every other call goes through. The route stays until the page closes.
 */
export async function holdFirstAnswer(
  page: Page,
  url: string,
  pick: (body: unknown) => boolean = () => true,
): Promise<HeldAnswer> {
  let release = (): void => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  let markHeld = (_request: Request): void => undefined;
  const request = new Promise<Request>((resolve) => (markHeld = resolve));
  let holding = true;
  await page.route(url, async (route) => {
    if (!holding || !pick(route.request().postDataJSON())) return route.continue();
    holding = false;
    const response = await route.fetch();
    markHeld(route.request());
    await released;
    await route.fulfill({ response });
  });
  return {
    request,
    async land() {
      release();
      await (await (await request).response())?.finished();
      await page.evaluate(
        () =>
          new Promise<void>((resolve) =>
            requestAnimationFrame(() => requestAnimationFrame(() => resolve())),
          ),
      );
    },
  };
}
