import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

/** Debian's Chromium (`.ci/run` installs it when missing); CHROMIUM_PATH overrides. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Where screenshots go: gitignored, kept as test artifacts. */
export const artifactsDir = join(process.cwd(), "test-artifacts", "webapp");

/** Launches headless Chromium with the flags this machine needs; throws naming the path when it is missing. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) throw new Error(`Chromium not found at ${chromiumPath}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"],
  });
}

/** A desktop (1280×800) or phone (360×740) browser context. */
export function newContext(browser: Browser, size: "desktop" | "phone", colorScheme: "light" | "dark" = "light"): Promise<BrowserContext> {
  return browser.newContext(
    size === "desktop"
      ? { viewport: { width: 1280, height: 800 }, colorScheme }
      : { viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, colorScheme },
  );
}

/** Saves a full-page screenshot as `test-artifacts/webapp/<name>.png`. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(artifactsDir, { recursive: true });
  const path = join(artifactsDir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Script run in the page before anything else: records every browser notification raised and lets
 * the test mark the tab hidden (`__setHidden(true)`), as a background tab would be.
 */
export const notificationProbe = `(() => {
  window.__notes = [];
  const Native = window.Notification;
  if (Native) {
    class Recorded extends Native {
      constructor(title, options) {
        window.__notes.push({ title, body: options && options.body });
        super(title, options);
      }
    }
    window.Notification = Recorded;
  }
  let hidden = false;
  Object.defineProperty(Document.prototype, "hidden", { configurable: true, get() { return hidden; } });
  Object.defineProperty(Document.prototype, "visibilityState", { configurable: true, get() { return hidden ? "hidden" : "visible"; } });
  window.__setHidden = (value) => { hidden = value; document.dispatchEvent(new Event("visibilitychange")); };
})();`;

/** Signs in by name on this machine as a person the install has never seen: it asks first, the test says yes. */
export async function signInAsNew(page: Page, name: string): Promise<void> {
  await page.fill("#name", name);
  await page.click("button[type=submit]");
  await page.getByRole("button", { name: `Start as ${name}` }).click();
}
