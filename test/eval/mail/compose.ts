/**
 * Builds the labelled mail sets (`corpus.jsonl`, `probes.jsonl`, `held-out.jsonl`) from the specs in this
 * folder: each spec becomes a real RFC 822 message through nodemailer's stream transport (MIME,
 * quoted-printable/base64, encoded-word subjects) — or is a hand-written raw message (`raw`) for
 * charsets and shapes nodemailer does not produce.
 *
 * Labels (`expect`): `access` — the mail is an access mail (codes, reset/sign-in/verification/
 * recovery links); `secrets` — strings that must never appear in the filtered text (a code in any
 * spacing counts as appearing); `keep` — harmless numbers and links that must appear unchanged.
 *
 * Run: `npx tsx test/eval/mail/compose.ts` (rewrites the three files).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import nodemailer, { type SendMailOptions } from "nodemailer";

export interface Expect {
  access: boolean;
  secrets?: string[];
  keep?: string[];
}

export interface MailSpec {
  id: string;
  from?: string;
  to?: string;
  subject?: string;
  text?: string;
  html?: string;
  encoding?: "quoted-printable" | "base64";
  headers?: Record<string, string>;
  attachments?: { filename: string; content: string; contentType?: string }[];
  /** A whole hand-written message instead of the fields above. */
  raw?: string;
  expect: Expect;
}

const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" });

/** The RFC 822 source of a spec. */
export async function toEml(spec: MailSpec, n: number): Promise<string> {
  if (spec.raw) return spec.raw;
  const options: SendMailOptions & { baseBoundary: string } = {
    from: spec.from ?? "Service <no-reply@service.example>",
    to: spec.to ?? "Ana Lima <ana@home.example>",
    subject: spec.subject ?? "",
    text: spec.text,
    html: spec.html,
    textEncoding: spec.encoding,
    headers: spec.headers,
    attachments: spec.attachments,
    date: new Date(Date.UTC(2025, 2, 1 + (n % 28), 8, n % 60)),
    messageId: `<corpus.${spec.id}@mail.example>`,
    // A fixed boundary keeps the generated files stable between runs (mail-composer option).
    baseBoundary: `corpus${n}`,
  };
  const info = await transport.sendMail(options);
  return (info.message as Buffer).toString("utf8");
}

async function write(file: string, specs: MailSpec[]): Promise<void> {
  const ids = new Set<string>();
  const lines: string[] = [];
  for (const [n, spec] of specs.entries()) {
    if (ids.has(spec.id)) throw new Error(`duplicate id ${spec.id}`);
    ids.add(spec.id);
    lines.push(JSON.stringify({ id: spec.id, eml: await toEml(spec, n), expect: spec.expect }));
  }
  writeFileSync(join(import.meta.dirname, file), `${lines.join("\n")}\n`);
  process.stdout.write(`${file}: ${specs.length} mails (${specs.filter((s) => s.expect.access).length} access)\n`);
}

async function main(): Promise<void> {
  const { accessMails } = await import("./specs-access.js");
  const { accessMailsIntl } = await import("./specs-access-intl.js");
  const { accessMailsCjk } = await import("./specs-access-cjk.js");
  const { harmlessMails } = await import("./specs-harmless.js");
  const { harmlessMailsIntl } = await import("./specs-harmless-intl.js");
  await write("corpus.jsonl", [...accessMails, ...accessMailsIntl, ...accessMailsCjk, ...harmlessMails, ...harmlessMailsIntl]);
  const { probeMails } = await import("./specs-probes.js");
  await write("probes.jsonl", probeMails);
  // Written after the rules, from the issue text alone (see specs-held-out.ts).
  const heldOutSpecs = "./specs-held-out.js";
  const heldOut = (await import(heldOutSpecs).catch(() => null)) as { heldOutMails: MailSpec[] } | null;
  if (heldOut) await write("held-out.jsonl", heldOut.heldOutMails);
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop()!)) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
