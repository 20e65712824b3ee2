import { contentWords, fold, isChatter } from "./text.js";

/**
 * "Nothing new" said in a sentence rather than as a bare marker (rule 1 of the filter): heartbeats
 * and routine reports such as "Heartbeat: all 4 monitors ran, nothing new.", "No new emails from the
 * school since yesterday.", "Unchanged: your score is 97.2%." Decided clause by clause, so that news
 * next to a no-news phrase ("no new emails, 3 new invoices", "nothing new on flats, but the landlord
 * replied") is kept. Lexicons cover English, German, Spanish, French, Portuguese and Italian.
 */

/** News after a contrast ("…, but the landlord replied") is news. */
const contrast = /\b(but|however|except|although|though|aber|jedoch|allerdings|pero|sin embargo|excepto|mais|cependant|sauf|porem|contudo|exceto|pero|tuttavia|tranne)\b/;

/** Things a routine report says there are none of. */
const newsNouns =
  "news|updates?|changes?|issues?|problems?|alerts?|incidents?|messages?|e-?mails?|mails?|activity|movement|transactions?|events?|results?|listings?|posts?|comments?|replies|notifications?|errors?|warnings?|findings?|developments?|invoices?|payments?|bills?|orders?|tickets?|deliveries|requests?|mentions?|tasks?|reminders?";

/** A clause that says a state did not change. */
const unchangedPhrase =
  /\b(unchanged|no change|still the same|same as (before|yesterday|last time|earlier)|as before|(has|have)( not|n't) changed|did( not|n't) change|remains? (the same|unchanged|stable)|no (movement|difference))\b/;

/** A clause that says there is nothing new (its other words only say where nothing is new). */
const noNewsPhrases: RegExp[] = [
  /\b(nothing|nichts|nada|rien|niente|nulla) (has |have |hat sich |ha )?(changed|happened|geandert|cambiado|change|mudou|cambiato)\b/,
  /\b(nothing|nichts|nada|rien|niente|nulla)( (at all|really|much|else|significant))? (new|neues|nuevo|nouveau|de nouveau|novo|de novo|nuovo|di nuovo|urgent|dringendes|urgente|important|wichtiges|to (report|flag|add)|changed|happening|unusual|needs? (your )?attention|requires? (your )?attention)\b/,
  new RegExp(`\\bno( [a-z'-]+){0,2} (${newsNouns})\\b`),
  unchangedPhrase,
  /\b(keine( neuen?)? (nachrichten|e-mails|mails|anderungen|veranderung(en)?|neuigkeiten|probleme|vorkommnisse)|unverandert|sin (novedades|cambios|mensajes nuevos|incidencias)|sans changement|aucun (changement|nouveau message|nouvel e-mail)|pas de (nouveaux? messages?|changement)|inchange(e|s)?|sem (novidades|alteracoes|mudancas|mensagens novas)|inalterad[oa]|nessun[ao]? (novita|cambiamento|nuovo messaggio)|invariat[oa])\b/,
  /\b(everything|all|things)('s| is| are)? (quiet|calm|fine|ok|okay|good|smooth|stable|running smoothly|as expected|normal)\b/,
  /\bno (further )?action (is )?(needed|required|necessary)\b/,
  /\b(completed|finished|ran|run|passed|succeeded) (successfully|without (errors|issues|problems|incident))\b/,
  /\b(running|runs|ran|went|going|working) (smoothly|fine|normally|as (expected|usual)|ok|okay|without (issues|errors|problems))\b/,
];

/** Clauses that only say a routine check happened ("I looked through your inbox", "all 4 monitors ran"). */
const metaPhrases: RegExp[] = [
  /^(i )?(have |'ve )?(just )?(checked|looked( through| at| over)?|scanned|reviewed|went (through|over)|searched|polled|monitored)\b[a-z0-9' ]{0,60}$/,
  /^(all )?(\d+ )?(monitors?|checks?|jobs?|scans?|watchers?|sources?|feeds?|backups?|syncs?|tests?|builds?|imports?|tasks?|runs?)( have| are| is)? (ran|run|completed?|finished|done|passed|succeeded)\b[a-z ]{0,20}$/,
  /^([a-z]+ )?(check|scan|sweep|review|run|sync)s? (is |are )?(complete|completed|done|finished)$/,
];

/** A clause that says a state continues ("still under maintenance", "noch immer geschlossen"). */
const stillPhrase = /^(it'?s |it is |is |are )?(still|noch( immer)?|immer noch|sigue|siguen|todavia|aun|toujours|encore|ainda|continua|ancora)\b/;

/** A clause ending in a colon with at most this many content words is a header ("Heartbeat:", "Daily report:"). */
const headerMaxWords = 2;

/**
 * True when every clause of `text` is small talk, a header, a note that a routine check ran, or a
 * no-news statement — and at least one says there is nothing new. A text opening with an
 * "unchanged" header ("Unchanged: …", "No change: …") is no news as a whole. Never true when the
 * text contrasts ("but", "aber", …): what follows a contrast is news.
 */
export function saysNothingNew(text: string): boolean {
  // "0 new invoices" says "no new invoices".
  const f = fold(text).replace(/(^|[\s,;:(])0\s+(?=[a-z])/g, "$1no ");
  if (contrast.test(f)) return false;
  if (/^\W*(unchanged|no change|still the same|unverandert|sin cambios|sans changement|inalterado|invariato)\s*[:—-]/.test(f)) return true;
  const clauses = f
    .split(/(?<=:)(?!\d)|[.!?;\n—–]+|,\s+|\s-\s|\b(?:and|und|y|et)\b/)
    .map((c) => c.replace(/[*_~>#"()[\]]/g, " ").trim())
    .filter((c) => c !== "" && !/^[\p{P}\p{S}\s]*$/u.test(c));
  let declared = false;
  // After "same as before" / "unchanged", a clause saying what is still the case repeats the old state.
  const unchangedDeclared = clauses.some((c) => unchangedPhrase.test(c));
  for (const clause of clauses) {
    const body = clause.replace(/:$/, "").trim();
    if (noNewsPhrases.some((p) => p.test(body))) {
      declared = true;
      continue;
    }
    if (unchangedDeclared && stillPhrase.test(body)) continue;
    if (clause.endsWith(":") && contentWords(body).length <= headerMaxWords && !/\d/.test(body)) continue;
    if (metaPhrases.some((p) => p.test(body))) continue;
    if (isChatter(body)) continue;
    return false;
  }
  return declared;
}
