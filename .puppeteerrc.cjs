/**
 * Puppeteer configuration (read by puppeteer's postinstall and at run time; puppeteer-core ignores it).
 * whatsapp-web.js depends on puppeteer, whose install would download Chrome for Testing: Familiar uses
 * the system Chromium instead (CHROMIUM_PATH, Debian's /usr/bin/chromium), and installs must work
 * offline. Source: https://pptr.dev/guides/configuration (Configuration.skipDownload, per-browser
 * `chrome.skipDownload` / `chrome-headless-shell.skipDownload`).
 *
 * @type {import("puppeteer").Configuration}
 */
module.exports = {
  skipDownload: true,
  chrome: { skipDownload: true },
  "chrome-headless-shell": { skipDownload: true },
  firefox: { skipDownload: true },
};
