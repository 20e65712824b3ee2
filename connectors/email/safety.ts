/**
 * Mail safety — the one door to the pure rules the e-mail connector applies before any mail
 * content leaves it (search snippets, read results, events, notifications), and before it answers
 * or trusts a mail. No I/O except `parseMailSource` (mailparser, in memory); no clock (time is passed in).
 *
 * ## 1. One-time codes, passwords and access links never reach the model (`filterMail`)
 * Input: subject, text and HTML as mailparser decodes them (`contentOf(parsedMail)`), or the raw
 * RFC 822 source (`filterMailSource`). Output: `{ subject, body, text, removed, accessMail, truncated }`
 * where `text = subject + "\n\n" + body` is exactly what the model may see, HTML turned into text
 * with links shown as `anchor text [URL]`, and each removal replaced by a neutral marker
 * ("[sign-in code removed]", "[password-reset link removed]" — `MARKERS`; `removed` lists kind and
 * marker, never the value). Build snippets from `body`, never from the raw mail.
 *
 * Removed: one-time, sign-in, verification, 2FA, TAN, recovery/backup codes and temporary
 * passwords (digits, letters and digits, spaced "4 8 2 9 1 7", dashed "482-917", split across HTML
 * tags or table cells, HTML entities, full-width digits, G-482917, "482917 is your code" in a
 * subject); password-reset, magic sign-in, e-mail/account verification, device approval and
 * account-recovery links — also behind click trackers (targets unwrapped from `?url=`, `?q=`,
 * base64 values, Outlook Safe Links, Proofpoint v2/v3, SES; an opaque tracker is judged by its
 * anchor text or, for "click here", the text around it). Every other appearance of a removed code
 * (subject, a URL) goes too. In English, German, French, Spanish, Portuguese, Chinese, Japanese.
 * Fail closed: in an access mail (an access subject, an OTP-Token header, or anything removed), a
 * code shown alone on its line or in the subject, a code after a colon near access words, and any
 * link carrying a token are removed; after "verification code is"/"password:" whatever stands
 * where the code would stand is removed even in an unknown format ("★ 7Q#4Z ★").
 *
 * Hard cases, decided (the number passes untouched unless said otherwise):
 * - Order, invoice, customer, account, ticket, tracking and reference numbers: labelled by their
 *   word ("Order 4829173", "Tracking number 1Z…", "Rechnungsnummer", "注文番号") — pass, even in an
 *   access mail. "Order" alone labels a number only right after it ("Order #4829173"), so "enter this
 *   code to confirm your order: 482917" is still a code.
 * - Meeting IDs, passcodes, passwords and dial-in PINs of meeting invites (a meeting-ID label or a
 *   Zoom/Teams/Meet/Webex join link anywhere in the mail): pass, and so does the join link with its
 *   `pwd=`. They let someone into one meeting, not into the person's accounts. A Zoom *sign-in*
 *   code ("Zoom verification code") is still removed.
 * - Booking references / PNRs, confirmation numbers of bookings, door, locker and pickup codes,
 *   gift-card, promo, coupon, referral and class codes, licence keys: pass (they are not the key
 *   to an account). An "auth code" on a card receipt passes (receipt words around, nothing warns);
 *   a payment's authorisation code that says "do not share" is removed.
 * - Phone numbers (three or more groups, or "+…"), prices and amounts, dates, times, years, IBANs,
 *   percentages, measures: pass by their shape.
 * - "Confirmation code" and "access code": a code unless booking, meeting or door words are around.
 * - Passwords in mail ("Temporary password: Tq9!vR2x", a Wi-Fi password): removed, symbols
 *   included — a password is a key whatever it opens. A booking-management "PIN code" is removed too.
 * - Links: a plain login page without a token ("https://shop.example/login") passes; an unsubscribe,
 *   privacy or help link passes; a link whose anchor says sign in / reset / verify and whose target
 *   is a click tracker that hides it is removed, even in a newsletter (we cannot see where it goes).
 *   Appointment "Confirm" links pass unless the text is about an e-mail address or account.
 * - Calendar RSVP links (`tok=`), invoice and ticket links with signatures: pass (no access words).
 * Limits, said plainly: a code written in words ("four eight two…"), in an image, or in an
 * attachment is not seen; a code with no access word near it in a mail that does not read as an
 * access mail passes. Caps: raw message 32 MiB (`MAX_SOURCE_BYTES`), HTML 12,000,000 characters,
 * body text 6,000,000 characters (the rest cut at a space and said so), subject 2,000 characters;
 * linear time, no backtracking regular expressions over the body.
 *
 * ## 2. No loops, no replies to machines (`neverAnswerReason`, `automaticSendBudget`)
 * Familiar's Message-IDs are `<familiar.{24 base32}@domain>` (`mintMessageId`, `parseMessageId`).
 * `neverAnswerReason(mail, { ownAddresses })` returns why a mail must never be answered
 * automatically (own Message-ID or a reply to one, the person's own address, Auto-Submitted,
 * Precedence bulk/list/junk, X-Auto-Response-Suppress, List-*, `Return-Path: <>`, multipart/report,
 * out-of-office subjects in 7 languages, no-reply/mailer-daemon/postmaster senders) or null.
 * `automaticSendBudget(history, thread, now, 3)` allows at most 3 automatic sends per thread in any
 * 24 hours; every automatic send carries `AUTOMATIC_SEND_HEADERS` (`Auto-Submitted: auto-replied`).
 *
 * ## 3. Senders are verified, never trusted on their word (`verifySender`)
 * Only the topmost Authentication-Results counts, and only from the configured authserv-id; DMARC
 * pass, or DKIM/SPF pass aligned with the From domain (organisational domain, Public Suffix List),
 * makes a sender verified; anything else is unverified with its reason.
 */
export { filterMail, MAX_BODY_CHARS, MAX_HTML_CHARS, MAX_SUBJECT_CHARS } from "./filter/redact.js";
export { contentOf, filterMailSource, MailReadError, MAX_SOURCE_BYTES, parseMailSource, type ParsedSource } from "./filter/parse.js";
export { MARKERS, type FilteredMail, type MailContent, type RemovedItem, type RemovedKind } from "./filter/types.js";
export {
  AUTOMATIC_SEND_HEADERS,
  automaticSendBudget,
  DEFAULT_AUTOMATIC_SENDS_PER_THREAD,
  neverAnswerReason,
  replyThreadHeaders,
  threadKey,
  type AnsweringContext,
  type AnsweringInput,
  type AutomaticSend,
  type BudgetVerdict,
  type NeverAnswer,
  type NeverAnswerReason,
} from "./automatic.js";
export { isFamiliarMessageId, mintMessageId, parseMessageId, type FamiliarMessageId } from "./message-id.js";
export { organizationalDomain, verifySender, type SenderVerdict, type UnverifiedReason, type VerifyOptions } from "./verify.js";
export { parseAuthenticationResults, type AuthenticationResults, type AuthResult } from "./auth-results.js";
export { addressesIn, headerValue, headerValues, parseHeaderBlock, type HeaderLine, type HeaderLines } from "./headers.js";
