/**
 * Whether a message names a time that depends on the person's time zone, and which zones a
 * messenger's language suggests — what Familiar needs to ask a person first met on a messenger for
 * their zone the first time a time matters (issue 19 item 5).
 *
 * Times are found with chrono-node's parsers (English, German, French, Spanish, Portuguese, Dutch,
 * Italian, Swedish, Finnish, Russian, Ukrainian, Japanese, Chinese …). A clock time counts ("at
 * 9", "tomorrow at 9", "every Monday at 8:30", "um 9 Uhr", "à 9h"); a day alone does not ("book
 * the table for Friday": a date reads the same in most zones, and ordinary talk is full of them),
 * nor "now" or a duration from now ("in 20 minutes", "in 2 hours": the same instant in every zone).
 */
import * as chrono from "chrono-node";

const parsers: { parse(text: string, ref?: Date): chrono.ParsedResult[] }[] = [chrono.en, chrono.de, chrono.fr, chrono.es, chrono.pt, chrono.nl, chrono.it, chrono.sv, chrono.fi, chrono.ru, chrono.uk, chrono.ja, chrono.zh];

/** True when `text` names a local clock time (chrono-node), not only a duration from `now`. */
export function mentionsLocalTime(text: string, now: Date): boolean {
  const sample = text.slice(0, 2_000);
  if (sample.trim() === "") return false;
  for (const parser of parsers) {
    for (const result of parser.parse(sample, now)) {
      const tags = result.tags();
      if (tags.has("result/relativeDateAndTime") || tags.has("casualReference/now")) continue;
      if (result.start.isCertain("hour")) return true;
    }
  }
  return false;
}

/**
 * Likely zones for a messenger's language code (Telegram's `language_code`, an IETF tag such as
 * `de`, `pt-br`, `en-GB`) or, failing that, the person's locale: at most three, most likely first;
 * empty when the language says nothing useful. A guess to offer, never to assume.
 */
export function zoneGuesses(languageCode: string | undefined, locale?: string): string[] {
  for (const tag of [languageCode, locale]) {
    if (!tag) continue;
    const [language = "", region = ""] = tag.toLowerCase().replace("_", "-").split("-");
    const byRegion = REGION_ZONES[region];
    if (byRegion && region !== "") return byRegion;
    const byLanguage = LANGUAGE_ZONES[language];
    if (byLanguage) return byLanguage;
  }
  return [];
}

/** Zones by language (the countries with most speakers on messengers first). */
const LANGUAGE_ZONES: Record<string, string[]> = {
  en: ["Europe/London", "America/New_York", "America/Los_Angeles"],
  de: ["Europe/Berlin", "Europe/Vienna", "Europe/Zurich"],
  fr: ["Europe/Paris", "Europe/Brussels", "America/Toronto"],
  es: ["Europe/Madrid", "America/Mexico_City", "America/Bogota"],
  pt: ["Europe/Lisbon", "America/Sao_Paulo"],
  it: ["Europe/Rome"],
  nl: ["Europe/Amsterdam", "Europe/Brussels"],
  sv: ["Europe/Stockholm"],
  fi: ["Europe/Helsinki"],
  da: ["Europe/Copenhagen"],
  nb: ["Europe/Oslo"],
  no: ["Europe/Oslo"],
  pl: ["Europe/Warsaw"],
  cs: ["Europe/Prague"],
  ru: ["Europe/Moscow", "Asia/Almaty"],
  uk: ["Europe/Kyiv"],
  tr: ["Europe/Istanbul"],
  el: ["Europe/Athens"],
  he: ["Asia/Jerusalem"],
  ar: ["Asia/Riyadh", "Africa/Cairo", "Asia/Dubai"],
  fa: ["Asia/Tehran"],
  hi: ["Asia/Kolkata"],
  id: ["Asia/Jakarta"],
  vi: ["Asia/Ho_Chi_Minh"],
  th: ["Asia/Bangkok"],
  ja: ["Asia/Tokyo"],
  ko: ["Asia/Seoul"],
  zh: ["Asia/Shanghai", "Asia/Taipei", "Asia/Hong_Kong"],
};

/** Zones by region, where a tag names one (`pt-br`, `en-us`). */
const REGION_ZONES: Record<string, string[]> = {
  us: ["America/New_York", "America/Chicago", "America/Los_Angeles"],
  gb: ["Europe/London"],
  ie: ["Europe/Dublin"],
  ca: ["America/Toronto", "America/Vancouver"],
  au: ["Australia/Sydney", "Australia/Perth"],
  nz: ["Pacific/Auckland"],
  in: ["Asia/Kolkata"],
  br: ["America/Sao_Paulo"],
  mx: ["America/Mexico_City"],
  ar: ["America/Argentina/Buenos_Aires"],
  at: ["Europe/Vienna"],
  ch: ["Europe/Zurich"],
  be: ["Europe/Brussels"],
  tw: ["Asia/Taipei"],
  hk: ["Asia/Hong_Kong"],
};
