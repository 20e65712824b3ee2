import { isSilenceToken } from "./silence.js";

/**
 * Text normalisation for the notification filter's deterministic novelty stage: no-news markers,
 * small talk, restatements, and a language-independent signature of a message (its numbers, times,
 * codes, links and status words) so that a reworded or translated duplicate is recognised without
 * a model. Lexicons cover English, German, Spanish, French, Portuguese and Italian.
 */

/** Lower-cased, accents removed (NFKD), typographic quotes and dashes made plain. */
export function fold(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .replace(/[‘’´`]/g, "'")
    .replace(/[“”«»„]/g, '"')
    .replace(/[‐-―]/g, "-");
}

/** Strips whitespace, punctuation and markdown decoration, lower-cased. */
export function normalizeForMarker(text: string): string {
  return fold(text)
    .replace(/[*_`~#>\[\]()!¡.,;:?¿"'\-\s]+/g, " ")
    .trim();
}

/** Markers a model uses to say "nothing to report" (field case P2). */
const noNewsMarkers = [
  "nothing_to_report", "nothing to report", "no_reply", "no reply", "heartbeat_ok", "heartbeat ok", "no news", "no updates", "no update", "nothing new",
  "noop", "none", "n/a", "all clear", "nichts neues", "keine neuigkeiten", "sin novedades", "nada nuevo", "rien de nouveau", "pas de nouvelles",
  "nada de novo", "sem novidades", "niente di nuovo", "nessuna novita",
].map(normalizeForMarker);

/**
 * True when the text is empty, only a "nothing to report" marker, or only a silence token (`[SILENT]`,
 * `<no_reply>`, any bracket and casing; see silence.ts), whatever whitespace, punctuation or markdown
 * surrounds it (field case P2, issue 18): such output is never delivered.
 */
export function isNoNews(text: string): boolean {
  const n = normalizeForMarker(text);
  return n === "" || noNewsMarkers.includes(n) || isSilenceToken(text);
}

/** Pleasantries and "all is well" phrases that carry no information on their own (field case P1). */
const chatterPhrases = [
  /\bjust (checking|popping) in\b/g,
  /\bchecking in\b/g,
  /\b(hope|hoping) (you'?re|you are|you're|your (day|week|weekend) is|all is|everything is) [a-z ]{0,30}(well|good|great|fine|going well|nicely)\b/g,
  /\bhave a (great|good|nice|lovely|wonderful) (day|evening|weekend|night|week|one)\b/g,
  /\b(hi|hey|hello|hiya|hallo|hola|coucou|salut|bonjour|ciao|ola|oi|good (morning|afternoon|evening)|guten (morgen|tag|abend)|buenos dias|buenas (tardes|noches)|bom dia|boa tarde|buongiorno)( there)?\b/g,
  /\bhow('s| is| are| was) (it going|things|your (day|week|weekend|morning)( going)?|you( doing)?|everything)\b/g,
  /\b(let me know|just let me know) if (you need|there'?s|there is) anything\b/g,
  /\b(i'?m|i am) (here|around) if you need (me|anything)\b/g,
  /\bjust (a )?(quick )?(reminder that i'?m here|wanted to say hi)\b/g,
  /\b(nothing|not much) (new|to report|happening)( (today|right now|at the moment|so far))?\b/g,
  /\ball (good|quiet|fine|well)( here| on my end)?\b/g,
  /\ball systems (are )?(operational|normal|go|green)\b/g,
  /\ball (\d+ )?(services|systems|checks|jobs|backups|servers|sites|monitors)( are| is)? (up|healthy|green|ok|okay|passing|running|operational|fine|normal)\b/g,
  /\b(is there )?anything (else )?i can (help|do) (you )?(with|for you)\b/g,
  /\bnothing (needs|requires|needing|requiring) (your )?attention\b/g,
  /\bno action (is )?(needed|required)\b/g,
  /\b(routine )?(check|checks|scan|run) (is |are )?(complete|completed|done|finished|passed)\b/g,
  /\b(looks like|what) a (lovely|beautiful|nice|gorgeous|sunny|great) (sunny )?(day|morning|evening|weather)\b/g,
  /\b(alle systeme|todos los sistemas|tous les systemes|todos os sistemas|tutti i sistemi) (laufen |funktionieren |funcionan |fonctionnent |funcionam |funzionano )?(normal|stabil|normalmente|correctamente|ok)\b/g,
  /\b(schonen (tag|abend)|(que tengas un )?buen dia|bonne (journee|soiree)|(tenha um )?bom dia|buona (giornata|serata))\b/g,
  /\beverything (is |looks |seems )?(fine|ok|okay|good|normal|running normally|on track|as usual)\b/g,
  /\bno (issues|problems|alerts|incidents|changes)( (found|detected|to report|so far))?\b/g,
  // de / es / fr / pt / it
  /\b(wie geht'?s|wie geht es dir|wie lauft'?s|wie war (deine|dein) (woche|tag))\b/g,
  /\b(que tal( (tu|va) (semana|dia))?|como (estas|va todo|te va))\b/g,
  /\b(comment (ca va|vas-tu|se passe ta (semaine|journee))|ca va)\b/g,
  /\b(tudo (bem|certo|bom|tranquilo)( por ai)?|como vai|como esta (a )?(sua|tua) semana)\b/g,
  /\b(come (va|stai)|tutto bene)\b/g,
  // Wishes, plans and "how did it go" with nothing to tell (issue 12: "how's your week going?").
  /\bhappy (monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|holidays?)\b/g,
  /\b(any|got any) (fun |big |nice )?plans (for|this) (the )?(weekend|evening|tonight|today|holidays?)\b/g,
  /\b(i )?hope (you|the|your|it|everything|all) [a-z' ]{0,40}(went|goes|go|is going|are going|was|were|slept|rested|had|have|are having|enjoy(ed)?|feel(ing)?) ?(well|great|smoothly|fine|ok|okay|nicely|good|fun|a (good|great|nice|lovely) (time|one|day|night|evening|weekend))\b/g,
  /\bhow did [a-z' ]{1,40} go\b/g,
  /\b(on|at) your (side|end)\b/g,
  /\b(i'?ll|i will|i'?m going to) (keep (an eye on|watching|track of|checking)|watch|monitor|let you know|keep you (posted|updated|informed))\b[a-z' ]{0,60}/g,
  /^\W*(morning|afternoon|evening|mornin')\b/g,
  /\b(i )?(just )?(wanted|want) to (see|check|ask|know|hear) how (you|things|it|everything)('re| are| is)?( [a-z]+){0,2}\b/g,
  /\b(i )?hope [a-z' ]{0,50}(off to a (good|great) start|a (good|great|nice|lovely|relaxing) (time|one|day|night|evening|weekend|start))\b/g,
  /\b(i'?m |i am )?(still )?(here|around|available) (if|whenever|when|in case) you need (me|anything|something|help)( at all)?\b/g,
  /\bjust a (friendly |quick |little )?reminder that i'?m (here|around)\b/g,
  /\bthanks? (you )?(so much )?for (letting me know|telling me|the update|sharing( that| this)?|the heads-up)( (about|on|regarding) [a-z' ]{0,40})?\b/g,
  /\b(wie (lauft|geht|war|ist) (es )?(dein|deine|ihr|ihre|der|die) (tag|woche|wochenende|morgen|abend)( so)?|schones wochenende)\b/g,
  /\b(buen fin de semana|bon week-end|bom fim de semana|buon fine settimana)\b/g,
  /\b(ich wollte (mich )?nur (kurz )?(melden|nachfragen)|solo (queria|pasaba a) saludar|je voulais (juste )?prendre des nouvelles|so passando para ver|volevo solo salutarti)\b/g,
];

/** Words that remain of pleasantries ("…having a great day") without adding anything. */
const chatterFiller = new Set(
  "day week weekend morning evening today there everyone everybody again going doing having well nice great good fine friend so far bisher heute hasta ahora jusqu'ici ate agora finora friendly daily weekly hourly routine quick status heartbeat check report summary".split(" "),
);

/** Function words (several languages) that add little on their own. */
const stopWords = new Set(
  (
    "a an the i im i'm you your yours me my we our us it its is are was were be been to of and or for on in at with just so here there now again all any anything some this that these those do does did have has had will would can could " +
    "should not no yes if as by from about into than then also very really still only just quick quickly let know hope please thanks thank " +
    "heads up fyi btw update news good note reminder psst " +
    "der die das ein eine und oder ist sind war zu von mit fur auf im in am den dem des es ich du sie wir ihr dein deine mein meine nicht noch schon nur " +
    "el la los las un una y o es son fue de del al en con por para que se su sus tu tus mi mis ya aun solo " +
    "le les une et ou est sont etait du au aux avec pour sur ce cet cette je tu il elle nous vous ton ta tes mon ma mes pas encore deja seulement " +
    "o os as um uma e ou sao foi do da dos das no na nos nas com por para seu sua teu tua meu minha nao ainda ja so " +
    "il lo gli un uno una e o sono era di del della al alla con per su tuo tua mio mia non ancora gia solo " +
    "votre vos leur leurs des ete son sa ses hat wird wurde wurden ihre ihren deinen deinem deiner einen einem einer ha han sido esta estan estao hanno stato stata"
  ).split(" "),
);

/** Content words: letters/digits runs, folded, function words removed. */
export function contentWords(text: string): string[] {
  return (fold(text).match(/[\p{L}\p{N}']+/gu) ?? []).map((w) => w.replace(/'s$/, "").replace(/^'+|'+$/g, "")).filter((w) => w.length > 1 && !stopWords.has(w));
}

/** True when the text is small talk without information (what is left after pleasantries is tiny). */
export function isChatter(text: string): boolean {
  let rest = fold(text).replace(/[*_~>#]/g, " ");
  let matched = false;
  for (const p of chatterPhrases) {
    rest = rest.replace(p, () => {
      matched = true;
      return " ";
    });
  }
  const words = contentWords(rest).filter((w) => !chatterFiller.has(w));
  if (/\d/.test(rest) || /https?:\/\//.test(text)) return false;
  return words.length === 0 && (matched || rest.trim() === "" || /^[\p{P}\p{S}\s]*$/u.test(rest));
}

/** Phrases that only repeat back what the person said. */
const restatementPhrases =
  /\b(as|like) you (said|mentioned|told me|asked|noted|wrote)\b|\byou (said|mentioned|told me|wrote|noted) (that|you|your|earlier)\b|\b(just )?to (recap|confirm what you said)\b|\bnoted(:| that| -)|\bi('ve| have) (noted|made a note) that you\b|\bper your (message|note)\b|\bwie du (gesagt|erwahnt) hast\b|\bcomo (dijiste|mencionaste|disseste|mencionaste)\b|\bcomme tu (l'as )?(dit|mentionne)\b|\bcome hai detto\b|\bgot it\b|^\W*noted\b|\bunderstood[,.!]|\bi'?ll (keep (that|this|it) in mind|remember (that|this|it))\b|\bso you('d| would)? (like|want|prefer)\b|\bso you('re| are) [a-z]+ing\b|\b(ich merke es mir|ich merke mir das|lo tendre en cuenta|je m'en souviendrai|vou lembrar disso|me lo ricordero)\b/;

/** True when the text frames itself as a restatement of the person's words ("As you said, …"). */
export function hasRestatementMarker(text: string): boolean {
  return restatementPhrases.test(fold(text));
}

/** Status words by meaning, across languages: a change of status is news even when numbers match. */
const statusLexicon: Record<string, RegExp> = {
  cancelled: /\b(cancel+ed|cancel+ation|annulee?s?|annulation|cancelad[oa]s?|cancelacion|storniert|annulliert|abgesagt|gestrichen|ausgefallen|fallt aus|cancellat[oi])\b/,
  delayed: /\b(delay(ed)?|(is|are|running|runs|arrives?|minutes?|mins?|hours?|hrs?) late|verspatet|verspatung|retrasad[oa]|retraso|retarde?e?|atrasad[oa]|atraso|in ritardo|ritardo)\b/,
  rebooked: /\b(rebooked|umgebucht|reprogramad[oa]|reserve a nouveau|remarcad[oa]|riprenotat[oa])\b/,
  gate: /\b(gate|puerta|porte|portao|flugsteig|uscita)\b/,
  boarding: /\b(boarding|einsteigen|embarque|embarquement|imbarco)\b/,
  shipped: /\b(shipped|dispatched|out for delivery|versandt|verschickt|in zustellung|enviad[oa]|en reparto|expedie?e?|en cours de livraison|spedit[oa]|saiu para entrega)\b/,
  delivered: /\b(delivered|zugestellt|geliefert|entregad[oa]|livree?|entregue|consegnat[oa])\b/,
  failed: /\b(fail(ed|ure|s)?|error|fehlgeschlagen|fehler|fall(o|ido)|echou?e?|echec|falhou|falha|non riuscit[oa]|errore)\b/,
  down: /\b((is|are|went|goes|still|been|now) down|down since|outage|offline|unreachable|ausfall|gestort|nicht erreichbar|caid[oa]|caida|sin servicio|panne|hors ligne|fora do ar|interruzione|irraggiungibile)\b/,
  resolved: /\b(resolved|recovered|fixed|back (up|online)|restored|behoben|wiederhergestellt|resuelt[oa]|restablecid[oa]|resolue?|retabli|resolvid[oa]|restabelecid[oa]|risolt[oa]|ripristinat[oa])\b/,
  approved: /\b(approved|accepted|genehmigt|angenommen|aprobad[oa]|aceptad[oa]|approuvee?|acceptee?|aprovad[oa]|approvat[oa])\b/,
  rejected: /\b(rejected|declined|denied|abgelehnt|rechazad[oa]|denegad[oa]|refusee?|rejeitad[oa]|recusad[oa]|rifiutat[oa]|respint[oa])\b/,
  paid: /\b(paid|bezahlt|beglichen|pagad[oa]|payee?|pag[oa]|pagat[oa])\b/,
  overdue: /\b(overdue|past due|uberfallig|vencid[oa]|en retard|em atraso|scadut[oa])\b/,
  due: /\b(due|deadline|fallig|frist|vence|vencimiento|plazo|echeance|date limite|vencimento|prazo|scadenza|scade)\b/,
  confirmed: /\b(confirmed|bestatigt|confirmad[oa]|confirmee?|confermat[oa])\b/,
  soldOut: /\b(sold out|out of stock|ausverkauft|agotad[oa]|epuisee?|esgotad[oa]|esaurit[oa])\b/,
  available: /\b(available|back in stock|in stock|verfugbar|disponible|disponivel|disponibile)\b/,
  fell: /\b(dropped|fell|down (from|by)|decreased|cheaper|lower|gesunken|gefallen|billiger|bajo|bajado|mas barat[oa]|baisse|moins cher|caiu|baixou|mais barat[oa]|sceso|calato|piu economic[oa])\b/,
  rose: /\b(rose|increased|went up|more expensive|higher|gestiegen|teurer|subio|mas car[oa]|augmente|plus cher|subiu|mais car[oa]|salito|aumentato|piu car[oa])\b/,
  // Only words that mean the relation and nothing else ("über", "unter", "over" also mean "about", "among").
  // "under €1,400", "over $500": before an amount these mean the relation.
  below: /\b(below|beneath|unterhalb|por debajo|en dessous|abaixo|al di sotto)\b|\b(under|unter|menos de|moins de|sotto) (?=[$€£¥₹]?\s?\d)/,
  above: /\b(above|oberhalb|por encima|au-dessus|acima|al di sopra)\b|\b(over|mas de|plus de|oltre) (?=[$€£¥₹]?\s?\d)/,
  today: /\b(today|heute|hoy|aujourd'?hui|hoje|oggi)\b/,
  tomorrow: /\b(tomorrow|morgen|manana|demain|amanha|domani)\b/,
  tonight: /\b(tonight|heute abend|heute nacht|esta noche|ce soir|hoje a noite|esta noite|stasera|stanotte)\b/,
  reply: /\b(replied|answered|responded|geantwortet|respondi[oó]|contesto|repondu|respondeu|rispost[oa])\b/,
};

/** Every status word of the lexicon, for removing them from a text's content words. */
const statusWords = new RegExp(Object.values(statusLexicon).map((r) => r.source).join("|"), "g");

/** The status classes a text mentions (language-independent keys such as `cancelled`, `due`). */
export function statusesOf(text: string): Set<string> {
  const f = fold(text);
  const out = new Set<string>();
  for (const [name, pattern] of Object.entries(statusLexicon)) if (pattern.test(f)) out.add(name);
  // Tonight is today ("heute ab 20:00" restates "tonight from 20:00").
  if (out.has("tonight")) out.add("today");
  return out;
}

/** A language-independent fact in a message. `num` facts compare by magnitude; the others by equality. */
export interface Fact {
  kind: "num" | "time" | "date" | "code" | "url";
  value: string;
  /** For `num`: the value as a number. */
  n?: number;
}

/** Reads a number written as 1,234.50 / 1.234,50 / 89,50 / 412.00 (null when it is not one). */
function parseNumber(raw: string): number | null {
  let s = raw;
  if (/^\d{1,3}(\.\d{3})+(,\d+)?$/.test(s)) s = s.replace(/\./g, "").replace(",", ".");
  else if (/^\d{1,3}(,\d{3})+(\.\d+)?$/.test(s)) s = s.replace(/,/g, "");
  else if (/^\d+,\d{1,2}$/.test(s)) s = s.replace(",", ".");
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

/**
 * The facts of a message, in order: links, e-mail addresses, codes (tokens mixing letters and
 * digits such as TP575 or INC-4821), clock times (17:00, 5pm → 17:00), dates, and numbers.
 */
export function factsOf(text: string): Fact[] {
  return analyse(text).facts;
}

/** What a message says, split into its facts, its remaining content words (stemmed) and its status classes. */
export interface Analysis {
  facts: Fact[];
  words: Set<string>;
  statuses: Set<string>;
}

/** Splits a message into facts, content words and statuses (see `factsOf`, `statusesOf`). */
export function analyse(text: string): Analysis {
  let rest = fold(text);
  const facts: Fact[] = [];
  const take = (pattern: RegExp, make: (m: RegExpExecArray) => Fact | null) => {
    // Only text that became a fact is removed (a "81.50" that is not a date stays for the number pass).
    let out = "";
    let last = 0;
    for (const m of rest.matchAll(pattern)) {
      const f = make(m);
      if (!f) continue;
      facts.push(f);
      out += `${rest.slice(last, m.index)} `;
      last = m.index + m[0].length;
    }
    rest = out + rest.slice(last);
  };
  take(/https?:\/\/[^\s)>\]]+/g, (m) => ({ kind: "url", value: m[0].replace(/[.,;]+$/, "") }));
  take(/[\w.+-]+@[\w-]+\.[\w.-]+/g, (m) => ({ kind: "url", value: m[0] }));
  // Host names ("example-shop.com", "blog.example.de") identify a site the way a link does.
  take(/\b(?:[a-z0-9-]+\.)+[a-z]{2,12}\b(?!\.?\d)/g, (m) => (/[a-z]{2,}\.[a-z]{2,}/.test(m[0]) ? { kind: "url", value: m[0] } : null));
  take(/\b(\d{4})-(\d{2})-(\d{2})\b/g, (m) => ({ kind: "date", value: `${m[1]}-${m[2]}-${m[3]}` }));
  // d/m(/y) and d.m.(y): "12/05", "12.05.", "12.05.2026" — never "3.10" (a price), never a month 0 or 13.
  const dayMonth = (m: RegExpExecArray): Fact | null => {
    const [d, mo] = [Number(m[1]), Number(m[2])];
    return d >= 1 && d <= 31 && mo >= 1 && mo <= 12 ? { kind: "date", value: `${d}/${mo}` } : null;
  };
  take(/\b(\d{1,2})\/(\d{1,2})(?:\/(\d{2,4}))?\b(?![.,]?\d)/g, dayMonth);
  take(/\b(\d{1,2})\.(\d{1,2})\.(\d{2,4})?(?!\d)/g, dayMonth);
  take(/\b(\d{1,2})[:h](\d{2})\s*(am|pm|a\.m\.|p\.m\.)?(?!\d)/g, (m) => ({ kind: "time", value: clock(Number(m[1]), Number(m[2]), m[3]) }));
  take(/\b(\d{1,2})\s*(am|pm|a\.m\.|p\.m\.)(?![a-z])/g, (m) => ({ kind: "time", value: clock(Number(m[1]), 0, m[2]) }));
  // "#48213", "Nr. 48213": a reference number is an identity, not a quantity that can drift.
  take(/(?:#|\b(?:no|nr|n°|num)\.?\s*)(\d{3,})\b/g, (m) => ({ kind: "code", value: `#${m[1]}` }));
  // How long an ongoing outage has lasted ("down for 45 minutes") is not a new fact about it.
  const statuses = statusesOf(text);
  if (statuses.has("down")) rest = rest.replace(elapsed, " ");
  take(/\b(?=[a-z0-9-]*\d)(?=[a-z0-9-]*[a-z])[a-z0-9]+(?:-[a-z0-9]+)*\b/g, (m) => {
    const v = m[0];
    // "5min", "3x", "2nd", "10kg": a number with a unit is a number, not a code.
    const unit = /^(\d+(?:[.,]\d+)?)(k|m|x|st|nd|rd|th|min|mins|h|hrs?|kg|km|gb|mb|eur|usd|pct)$/.exec(v);
    if (unit) {
      const n = parseNumber(unit[1]!);
      return n === null ? null : { kind: "num", value: String(n), n };
    }
    return { kind: "code", value: v };
  });
  take(/\d+(?:[.,]\d+)*/g, (m) => {
    const n = parseNumber(m[0]);
    return n === null ? null : { kind: "num", value: String(n), n };
  });
  // Status words are compared as statuses (language-independent), not again as words.
  return { facts, words: new Set(contentWords(rest.replace(statusWords, " ")).map(stem)), statuses };
}

/** An elapsed duration ("for 45 minutes", "seit 2 Stunden", "desde hace 45 minutos"). */
const elapsed =
  /\b(for( the (past|last))?|since|seit|desde hace|desde|depuis|ha|da)\s+\d+(?:[.,]\d+)?\s*(minutes?|mins?|hours?|hrs?|h|minuten|stunden|std|minutos|horas|heures|minuti|ore)\b/g;

function clock(h: number, m: number, meridiem: string | undefined): string {
  let hour = h;
  if (meridiem?.startsWith("p") && hour < 12) hour += 12;
  if (meridiem?.startsWith("a") && hour === 12) hour = 0;
  return `${String(hour).padStart(2, "0")}:${String(m).padStart(2, "0")}`;
}

/** Jaccard similarity in [0, 1] of two sets (1 for two empty sets). */
export function jaccard<T>(a: Set<T>, b: Set<T>): number {
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  const union = a.size + b.size - inter;
  return union === 0 ? 1 : inter / union;
}

/** Word-trigram Jaccard similarity in [0, 1] of the folded texts. */
export function similarity(a: string, b: string): number {
  const grams = (t: string) => {
    const w = fold(t).match(/[\p{L}\p{N}]+/gu) ?? [];
    const out = new Set<string>();
    if (w.length < 3) out.add(w.join(" "));
    for (let i = 0; i + 2 < w.length; i++) out.add(`${w[i]} ${w[i + 1]} ${w[i + 2]}`);
    return out;
  };
  return jaccard(grams(a), grams(b));
}

/** Light stem so "fares"/"fare", "dropped"/"drop" compare equal. */
export function stem(word: string): string {
  if (word.length > 5 && word.endsWith("ing")) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith("ed")) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

/** Content words without numbers, codes and links, stemmed: what a sentence says besides its facts. */
export function wordsOf(text: string): Set<string> {
  return analyse(text).words;
}
