/**
 * The Connections section in real Chromium, against a real Dovecot (IMAP with STARTTLS on a
 * self-signed certificate) and Postfix (submission): the person adds a mailbox — a Test with a wrong
 * password says in plain words what failed and keeps nothing, a Test with the right one passes —,
 * connects it with nothing granted, grants Read on its card, sees it sync and hold IMAP IDLE, tests
 * it again and disconnects it: the password is gone from the vault on disk. The password is never
 * in the page after it was typed, nor in a log. Screenshots at 1280 and 360 px.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SecretVault } from "../../core/secrets/index.js";
import { buildWebUi } from "../../webui/build.mjs";
import { startFakeOpenAI, text, type FakeOpenAIServer } from "../fakes/openai-server.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { launchChromium, newContext, screenshot, signInAsNew } from "../helpers/browser.js";
import { postfixUnavailable, settingsFor, startMailServers, type MailServers } from "../helpers/mail/servers.js";

const noPostfix = postfixUnavailable();

/** Fills the mailbox form as a person would: address, both servers (STARTTLS), the test CA and `password`. */
async function fillMailbox(page: Page, servers: MailServers, password: string): Promise<void> {
  const s = settingsFor(servers, servers.accounts[0]);
  await page.getByLabel("Email address").fill(s.address);
  await page.getByLabel("IMAP server").fill(s.imap.host);
  await page.getByLabel("IMAP port").fill(String(s.imap.port));
  await page.getByLabel("IMAP encryption").selectOption("starttls");
  await page.getByLabel("SMTP server").fill(s.smtp.host);
  await page.getByLabel("SMTP port").fill(String(s.smtp.port));
  await page.getByLabel("SMTP encryption").selectOption("starttls");
  await page.getByLabel(/^CA certificate/).fill(servers.cert.certPem);
  await page.getByLabel("App password").fill(password);
}

describe.skipIf(noPostfix !== null)("the Connections section in real Chromium", () => {
  let browser: Browser;
  let servers: MailServers;
  let model: FakeOpenAIServer;
  let app: TestApp | null = null;

  beforeAll(async () => {
    [, browser, servers, model] = await Promise.all([buildWebUi(), launchChromium(), startMailServers(), startFakeOpenAI({ fallback: text("ok") })]);
  }, 120_000);
  afterEach(async () => {
    await app?.close();
    app = null;
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all([servers?.close(), model?.close()]);
  });

  it("adds a Dovecot mailbox, tests it (a wrong password in plain words), grants read, shows its state and disconnects it", async () => {
    app = await startTestApp({ OPENAI_BASE_URL: model.url, NOTIFY_MODEL_JUDGEMENT: "false", EMAIL_POLL_MS: "500" });
    const password = servers.accounts[0].password;
    const desktop = await newContext(browser, "desktop");
    const page = await desktop.newPage();
    await page.goto(app.url);
    await signInAsNew(page, "ana");
    await page.waitForURL(/\/(chat|setup)$/);
    await page.getByRole("link", { name: "Dashboard" }).click();
    await page.getByRole("link", { name: "Connections" }).click();
    await page.waitForURL("**/dashboard/connections");
    await page.getByText("No connections yet.").waitFor();
    // What each capability allows is said before anything is connected.
    await page.getByRole("button", { name: "Add a mailbox" }).click();
    const form = page.getByRole("form", { name: "Email (IMAP and SMTP)" });
    await form.getByText("Familiar can write drafts, send mail and reply").waitFor();

    // A wrong password: the Test says which server refused what, in words, and nothing is kept.
    await fillMailbox(page, servers, "wrong-password-7");
    await form.getByRole("button", { name: "Test", exact: true }).click();
    const failed = form.getByRole("alert");
    await failed.getByText("Test failed:").waitFor({ timeout: 30_000 });
    const words = await failed.innerText();
    expect(words).toMatch(/The IMAP server at 127\.0\.0\.1:\d+ refused the user name or app password\. Check both/);
    expect(words).toMatch(/The SMTP server at 127\.0\.0\.1:\d+ refused the user name or app password/);
    expect(words).not.toMatch(/^\s*at |\bat [A-Za-z.]+ \(|ImapFlow|undefined|\[object|wrong-password-7/m);
    await failed.scrollIntoViewIfNeeded();
    await screenshot(page, "connections-test-failed-desktop");
    expect(await app.store.connections.listConnections()).toEqual([]);

    // The right password: the Test passes and still keeps nothing.
    await page.getByLabel("App password").fill(password);
    await form.getByRole("button", { name: "Test", exact: true }).click();
    await form.getByText(/Test passed: connected and logged in\. IMAP: logged in, INBOX has \d+ messages?\. SMTP: logged in\./).waitFor({ timeout: 30_000 });
    expect(await app.store.connections.listConnections()).toEqual([]);
    // Connect with nothing granted (Read is ticked by default: the test unticks it to grant it on the card).
    await form.getByRole("checkbox", { name: "Read mail" }).uncheck();
    await form.getByRole("button", { name: "Connect", exact: true }).click();
    const card = page.getByRole("listitem", { name: "Email (IMAP and SMTP): ana@example.test" });
    await card.waitFor({ timeout: 30_000 });
    await card.locator(".badge", { hasText: "connected" }).waitFor();
    await card.getByText("Not syncing: Read is not granted.").waitFor();
    await page.getByRole("status").getByText("Connected ana@example.test. Familiar may: nothing yet").waitFor();
    // The password is nowhere in the page once it was sent (the form is gone; nothing shows it back).
    expect(await page.content()).not.toContain(password);

    // Grant Read on the card: the mailbox syncs and holds IMAP IDLE; the card says so.
    await card.getByRole("checkbox", { name: "Read mail" }).check();
    await page.getByRole("status").getByText("ana@example.test: granted — Read mail.").waitFor();
    await card.getByText(/^IMAP IDLE alive: new mail is noticed as it arrives/).waitFor({ timeout: 30_000 });
    const lastSync = await card.locator(".detail", { hasText: "Last sync" }).locator("dd").innerText();
    expect(lastSync).not.toBe("never");
    expect(await card.locator(".detail", { hasText: "Last error" }).locator("dd").innerText()).toBe("none");
    expect(await card.getByRole("checkbox", { name: "Send mail" }).isChecked()).toBe(false);
    const [stored] = await app.store.connections.listConnections();
    expect(stored!.capabilities).toEqual(["read"]);
    await screenshot(page, "connections-desktop");

    // The same section on a 360-px phone: nothing wider than the screen.
    const phone = await newContext(browser, "phone");
    const mobile = await phone.newPage();
    await mobile.goto(app.url);
    await mobile.fill("#name", "ana");
    await mobile.click("button[type=submit]");
    await mobile.waitForURL(/\/(chat|setup)$/);
    await mobile.goto(`${app.url}/dashboard/connections`);
    const phoneCard = mobile.getByRole("listitem", { name: "Email (IMAP and SMTP): ana@example.test" });
    await phoneCard.getByText(/^IMAP IDLE alive/).waitFor({ timeout: 30_000 });
    expect(Number(await mobile.evaluate("document.documentElement.scrollWidth"))).toBeLessThanOrEqual(360);
    await screenshot(mobile, "connections-phone");
    await mobile.getByRole("button", { name: "Add a calendar account (CalDAV)" }).click();
    await mobile.getByLabel("CalDAV server URL").waitFor();
    expect(Number(await mobile.evaluate("document.documentElement.scrollWidth"))).toBeLessThanOrEqual(360);
    await screenshot(mobile, "connections-add-caldav-phone");
    await phone.close();

    // Change its settings: the form comes back filled in, the password empty (write-only), and an empty one keeps the stored one.
    await card.getByRole("button", { name: "Change settings…" }).click();
    const change = card.getByRole("form", { name: "Change ana@example.test" });
    expect(await change.getByLabel("IMAP port").inputValue()).toBe(String(servers.imap.port));
    expect(await change.getByLabel("App password").inputValue()).toBe("");
    await change.getByLabel("Your name (shown as sender)").fill("Ana");
    await change.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByRole("status").getByText("Saved the settings of ana@example.test.").waitFor({ timeout: 30_000 });
    expect((await app.store.connections.listConnections())[0]!.settings).toMatchObject({ name: "Ana" });

    // Test the kept connection, then disconnect it: the password is deleted from the vault.
    await card.getByRole("button", { name: "Test", exact: true }).click();
    await card.getByText(/Test passed: connected and logged in\. IMAP: logged in/).waitFor({ timeout: 30_000 });
    const personId = stored!.personId;
    const secretName = `connection.${stored!.id}`;
    expect((await SecretVault.open({ dataDir: app.dataDir })).list(personId).map((s) => s.name)).toContain(secretName);
    await card.getByRole("button", { name: "Disconnect…" }).click();
    await card.getByRole("button", { name: "Really disconnect ana@example.test" }).click();
    await page.getByRole("status").getByText("Disconnected ana@example.test. Its password was deleted from your vault.").waitFor();
    await page.getByText("No connections yet.").waitFor();
    expect(await app.store.connections.listConnections()).toEqual([]);
    expect((await SecretVault.open({ dataDir: app.dataDir })).list(personId).map((s) => s.name)).not.toContain(secretName);
    expect(app.logs.join("\n")).not.toContain(password);
    expect(app.logs.join("\n")).not.toContain("wrong-password-7");
    await desktop.close();
  }, 180_000);
});
