/**
 * Holds one answer back in the browser, as a busy carrier would: the request is made and
 * answered at once, but the page gets the answer only when the test lets it go. For tests of
 * answers that land out of order: the held, older one must not replace a newer one shown first.
 */
import type { Page, Request } from '@playwright/test';

/** An answer held back: `asked` once its request is made, `release` once it has landed. */
export interface HeldAnswer {
  asked: Promise<Request>;
  /** Lets the answer go; resolves once the page has taken it and drawn twice since. */
  release: () => Promise<void>;
}

/**
 * Holds the answer of the next request whose URL `matches` (a glob, or a test of the URL) and
 * whose JSON body `pick` takes; every other request passes, and so do all once it is released.
 */
export async function holdNextAnswer(
  page: Page,
  matches: string | ((url: URL) => boolean),
  pick: (body: unknown) => boolean = () => true,
): Promise<HeldAnswer> {
  let letGo = (): void => undefined;
  const released = new Promise<void>((resolve) => (letGo = resolve));
  let markAsked = (_request: Request): void => undefined;
  const asked = new Promise<Request>((resolve) => (markAsked = resolve));
  let holding = true;
  await page.route(matches, async (route) => {
    if (!holding || !pick(route.request().postDataJSON())) return route.continue();
    holding = false;
    const response = await route.fetch();
    markAsked(route.request());
    await released;
    await route.fulfill({ response });
  });
  return {
    asked,
    async release() {
      letGo();
      await (await (await asked).response())?.finished();
      await page.evaluate(
        () =>
          new Promise<void>((resolve) =>
            requestAnimationFrame(() => requestAnimationFrame(() => resolve())),
          ),
      );
      await page.unroute(matches);
    },
  };
}
