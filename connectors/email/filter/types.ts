/**
 * The shapes of the mail-safety filter: what goes in, what comes out, what a removal is called.
 */
import type { Purpose } from "./lexicon.js";

/** What was removed. A closed set: the connector, cards and the eval report these names. */
export type RemovedKind =
  | "sign-in-code"
  | "verification-code"
  | "reset-code"
  | "recovery-code"
  | "one-time-code"
  | "password"
  | "sign-in-link"
  | "verification-link"
  | "reset-link"
  | "recovery-link"
  | "access-link";

/** The neutral marker that stands in the text where something was removed. Contains no digits. */
export const MARKERS: Readonly<Record<RemovedKind, string>> = {
  "sign-in-code": "[sign-in code removed]",
  "verification-code": "[verification code removed]",
  "reset-code": "[password-reset code removed]",
  "recovery-code": "[recovery code removed]",
  "one-time-code": "[one-time code removed]",
  password: "[password removed]",
  "sign-in-link": "[sign-in link removed]",
  "verification-link": "[verification link removed]",
  "reset-link": "[password-reset link removed]",
  "recovery-link": "[account-recovery link removed]",
  "access-link": "[access link removed]",
};

/** One removal, in text order. Never holds the removed value. */
export interface RemovedItem {
  kind: RemovedKind;
  marker: string;
}

/**
 * A mail as the filter reads it: the decoded subject and bodies (what mailparser's `ParsedMail`
 * has as `subject`, `text` and `html`). When `html` is present and not blank it is the body (it is
 * what the person sees); otherwise `text`. `otpCode` is the code of a valid `OTP-Token` header
 * (mailparser's `otp.code`), which is removed wherever it appears.
 */
export interface MailContent {
  subject?: string | null;
  text?: string | null;
  html?: string | false | null;
  otpCode?: string | null;
}

/** What the model may see of a mail. */
export interface FilteredMail {
  /** The subject after the filter (one line). */
  subject: string;
  /** The body as text (HTML converted; links shown as "anchor text [URL]") after the filter. */
  body: string;
  /** Exactly what the model sees: `subject + "\n\n" + body`. */
  text: string;
  removed: RemovedItem[];
  /** The mail reads as an access mail (a code, reset, sign-in or verification mail). */
  accessMail: boolean;
  /** The body was longer than the filter reads (`MAX_BODY_CHARS`) and was cut. */
  truncated: boolean;
}

export function kindFor(what: "code" | "link", purpose: Purpose | null): RemovedKind {
  if (what === "link") {
    switch (purpose) {
      case "sign-in":
        return "sign-in-link";
      case "verification":
        return "verification-link";
      case "reset":
      case "password":
        return "reset-link";
      case "recovery":
        return "recovery-link";
      default:
        return "access-link";
    }
  }
  switch (purpose) {
    case "sign-in":
      return "sign-in-code";
    case "verification":
      return "verification-code";
    case "reset":
      return "reset-code";
    case "recovery":
      return "recovery-code";
    case "password":
      return "password";
    default:
      return "one-time-code";
  }
}
