import { conceptsOf } from "./concepts.js";
import { analyse, contentWords, fold, statusesOf, stem } from "./text.js";

/**
 * No news recognised by its shape (issue 18), not by phrases: a message tells the person something
 * only when it carries a new *specific* — a number, time, date, code, link, name or status the person
 * was not already told (or told Familiar) — or reports a change or event ("posted", "arrived",
 * "called", "moved") about something not already said. Heartbeats however politely worded ("The
 * systems you care about are humming along nicely"), motivational check-ins ("You've got this!") and a
 * status reworded ("still making its way to you via Leipzig") carry none. A negated specific ("no
 * errors", "nothing changed", "keine Änderungen") is not one. Counts of what was checked ("your 4
 * watches look fine") and bare day words ("today") count only next to a change.
 * Lexicons (negation, change words, units) cover English, German, Spanish, French, Portuguese, Italian.
 */

/** What a message carries that could be news. */
export interface Specifics {
  /** Numbers (by value), times, dates, codes, links, day and month names. */
  facts: Set<string>;
  /** Counts of things ("4 watches", "3 of 3"): news only next to a change. */
  counts: Set<string>;
  /** Status classes (text.ts) outside negations; `today`/`tomorrow`/`tonight` are kept apart as `days`. */
  statuses: Set<string>;
  days: Set<string>;
  /** Capitalised words inside a sentence and all-caps words (not in German, where every noun is capitalised). */
  names: Set<string>;
  /** Change and event words outside negations. */
  events: Set<string>;
  /** Every content word, stemmed (for "a change about something not already said"). */
  words: Set<string>;
}

/**
 * Words that negate a thing ("no errors", "nothing has changed", "sin cambios", "0 new"): a clause
 * they open says there is none of it.
 */
const negators = new Set(
  "no nothing none never without nobody neither nor zero 0 kein keine keinen keiner keinem nichts nie ohne sin nada ningun ninguna ninguno nunca ni sans aucun aucune rien jamais sem nenhum nenhuma senza nessun nessuna nessuno niente nulla mai geen niets".split(" "),
);
/**
 * Words that negate a verb ("didn't run", "is not down", "n'a pas"): they mute the verb phrase that
 * follows, not its subject — a backup that "didn't run" is news, a service that "isn't down" is not.
 */
const verbNegators = new Set("not n't isn't aren't wasn't weren't don't doesn't didn't hasn't haven't hadn't won't can't couldn't nicht pas nao non niet".split(" "));

/** Familiar's own plans ("I'll keep you posted", "I'll let you know") are not news about the world. */
const ownPlans = /\b(i'll|i will|i'm going to|i am going to|i'd|we'll|ich werde|werde ich|voy a|te aviso|je vais|je te tiens|vou|vado a|ti terro)\b[^.!?;\n]*/g;

/** Change and event words, by stem (matched at the start of a folded word). */
const eventStems = (
  "again wieder otra nuevamente encore novamente new newly changed moved added removed deleted posted published released announced launched opened closed started starts began begins ended arrived arrives arriving arrival came called phoned emailed texted messaged wrote sent received booked reserved bought sold charged credited debited refunded withdrawn transferred raised lowered increased decreased dropped fell rose jumped surged spiked plunged returned missed broke broken crashed stopped leaked expired expires expiring renewed renews updated rescheduled postponed found detected appeared listed won lost signed submitted ready unread pending missing expected forecast warning alert reached crossed exceeded hit back need needs needed require requires required problem issue exception attention action fix " +
  // de
  "neu geandert verschoben hinzugefugt veroffentlicht angekundigt eroffnet geschlossen begonnen angekommen kommt angerufen geschrieben geschickt erhalten eingegangen gebucht gekauft verkauft belastet gutgeschrieben erstattet gestiegen gesunken zuruck verpasst kaputt abgelaufen verlangert aktualisiert gefunden erkannt warnung erwartet bereit fertig ausstehend fehlt " +
  // es
  "nuev cambio cambiado movido anadido publicado anunciado abierto cerrado empezo termino llego llegado llega llamo escribio recibido reservado comprado vendido cobrado abonado reembolsado volvio perdido roto caducado renovado actualizado encontrado detectado aviso alerta previsto listo pendiente falta " +
  // fr
  "nouveau nouvelle nouveaux change deplace ajoute publie annonce ouvert ferme commence termine arrive appele ecrit envoye recu reserve achete vendu debite credite rembourse augmente revenu manque casse expire renouvele trouve detecte alerte avertissement prevu pret attente " +
  // pt
  "novo nova novos novas mudou alterado adicionado anunciado aberto fechado comecou terminou chegou ligou escreveu recebido comprado cobrado creditado voltou quebrado expirou atualizado pronto pendente " +
  // it
  "nuov cambiato spostato aggiunto pubblicato annunciato aperto chiuso iniziato finito arrivato arriva chiamato scritto inviato ricevuto prenotato comprato venduto addebitato accreditato rimborsato aumentato tornato perso rotto scaduto rinnovato aggiornato trovato rilevato avviso pronto attesa manca"
).split(" ");

const eventSet = new Set(eventStems);
/** Inflections a change word may carry ("arrives", "gebuchte", "nuevas", "nouvelles"). */
const inflection = /^(s|es|ed|d|n|en|er|e|a|o|i|os|as|ly|lle|lles|aux|au|ing|t|te|ten)$/;
function isEvent(word: string): boolean {
  if (word === "news" || word === "neuigkeiten" || word === "nouvelles") return false;
  if (eventSet.has(word)) return true;
  for (let cut = 1; cut <= 4 && cut < word.length - 2; cut++) if (eventSet.has(word.slice(0, -cut)) && inflection.test(word.slice(-cut))) return true;
  return false;
}

/** "New" that describes time, not a thing ("a new day", "new week"). */
const newTime = /^(day|week|month|year|morning|start|chance|opportunity|beginning|tag|woche|dia|semana|jour|semaine|giorno|settimana)/;

/** Words after a number that make it a quantity, not a count of things (durations, units, money). */
const units =
  /^(%|percent|prozent|por|pour|per|k|m|km|kg|g|cm|mm|mi|lb|lbs|mb|gb|tb|x|h|hr|hrs|hour|hours|min|mins|minute|minutes|sec|secs|second|seconds|day|days|week|weeks|month|months|year|years|stunden?|tage?n?|minuten?|wochen?|monate?n?|jahre?n?|horas?|dias?|semanas?|meses|anos?|heures?|jours?|semaines?|mois|ans?|ore|giorni|settimane|mesi|anni|degrees?|grad|grados|degres|gradi|eur|euro|euros|usd|dollars?|gbp|chf|brl|inr|jpy|pounds?|cents?|rooms?|people|persons?|adults?|seats?|nights?)$/;

const notNoun = /^(is|are|was|were|be|and|or|to|of|in|on|at|for|by|from|the|a|an|with|than|ist|sind|und|oder|es|son|y|est|sont|et|e|sao|sono)$/;

/** Day and month names that mean nothing else. */
const dayNames =
  /\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|april|june|july|august|september|october|november|december|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag|januar|februar|marz|juni|juli|oktober|dezember|lunes|martes|miercoles|jueves|viernes|sabado|enero|febrero|marzo|abril|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|janvier|fevrier|avril|juin|juillet|aout|septembre|octobre|novembre|decembre|janeiro|fevereiro|marco|junho|julho|setembro|outubro|dezembro|lunedi|martedi|mercoledi|giovedi|venerdi|domenica|gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre)\b/g;
/** Abbreviations and names that are also words ("mon côté", "you may", "mai" = never): a date only next to a number. */
const shortDays = String.raw`(mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|mai|mars|maio|domingo)`;
const shortDayNames = new RegExp(String.raw`\b\d{1,2}\.?\s*${shortDays}\b|\b${shortDays}\.?\s*\d{1,2}\b`, "g");

/** All-caps words that name nothing. */
const plainCaps = new Set("ok okay fyi asap ps am pm tl dr btw eta pls nb".split(" "));

/** More than one German function word: capitalisation marks nouns, not names. */
const german = (folded: string) => (folded.match(/\b(der|die|das|und|ist|dein|deine|deinem|deinen|wird|nicht|fur|mit|auf|ein|eine|sich|bei|noch|ich|du|es|gibt|alles|zu)\b/g) ?? []).length >= 2;

/** The folded text with negated spans and Familiar's own plans blanked out (clause by clause). */
function positive(folded: string): string {
  return folded
    .replace(ownPlans, " ")
    // fold() made dashes plain: " - " separates clauses like a full stop.
    .split(/(?=[.!?;\n]|\s-\s|,\s*(?:but|aber|pero|mais|ma|mas|however|jedoch|sin embargo|cependant|tuttavia|porem)\b)/)
    .map((clause) => {
      const tokens = clause.match(/[\p{L}\p{N}']+|[^\p{L}\p{N}']+/gu) ?? [];
      const words = tokens.filter((t) => /[\p{L}\p{N}]/u.test(t));
      // A clause opening with a negation ("nothing for you to look at today") is negated as a whole.
      if (words.slice(0, 3).some((w) => negators.has(w))) return " ";
      let out = "";
      let muted = 0;
      for (const t of tokens) {
        const word = /[\p{L}\p{N}]/u.test(t);
        if (word && (negators.has(t) || verbNegators.has(t))) {
          muted = negators.has(t) ? 4 : 3;
          out += " ";
        } else if (word && muted > 0) {
          muted--;
          out += " ";
        } else out += t;
      }
      return out;
    })
    .join(" ");
}

function names(text: string): Set<string> {
  const out = new Set<string>();
  const isGerman = german(fold(text));
  // Emoji and ticks end a sentence too ("Systems check ✔️ Everything nominal").
  for (const sentence of text.split(/[.!?\n:;•·|]+\s*|\s[—–-]\s|[\p{Extended_Pictographic}✓✔☑]\uFE0F?\s*/u)) {
    const tokens = [...sentence.matchAll(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu)].map((m) => m[0]);
    tokens.forEach((w, i) => {
      if (!/^\p{Lu}/u.test(w) || /^I(['’](m|ve|ll|d))?$/.test(w)) return;
      const caps = /^[\p{Lu}\p{N}'’-]+$/u.test(w) && (w.match(/\p{Lu}/gu) ?? []).length >= 2;
      if (caps ? plainCaps.has(w.toLowerCase()) : i === 0 || isGerman) return;
      out.add(fold(w).replace(/['’]s$/, ""));
    });
  }
  return out;
}

/** The specifics of a message (see `Specifics`). */
export function specificsOf(text: string): Specifics {
  const folded = fold(text);
  const pos = positive(folded);
  const facts = new Set<string>();
  const counts = new Set<string>();
  const quantities = new Set<string>();
  for (const m of pos.matchAll(/(?:^|[^\d.,$€£¥₹\w])(\d{1,3})\s+(?:of\s+\d{1,3}\s+|von\s+\d{1,3}\s+|de\s+\d{1,3}\s+)?([\p{L}][\p{L}'-]*)/gu)) {
    // "45 is due": a number followed by a verb or a function word is a value, not a count of things.
    (units.test(m[2]!) || notNoun.test(m[2]!) ? quantities : counts).add(String(Number(m[1])));
  }
  for (const m of pos.matchAll(/\b(all|alle|todos|todas|tous|toutes|tutti|tutte)\s+(\d{1,3})\b/g)) counts.add(String(Number(m[2])));
  for (const f of analyse(pos).facts) {
    // A reference ("#44120") and the same digits written bare ("order 44120") are one identity.
    const key = f.kind === "num" ? `num:${f.n ?? f.value}` : f.kind === "code" && /^#\d+$/.test(f.value) ? `num:${Number(f.value.slice(1))}` : `${f.kind}:${f.value}`;
    if (f.kind === "num" && counts.has(String(f.n ?? f.value)) && !quantities.has(String(f.n ?? f.value))) continue;
    facts.add(key);
  }
  for (const m of pos.matchAll(dayNames)) facts.add(`day:${m[1]}`);
  for (const m of pos.matchAll(shortDayNames)) facts.add(`day:${m[1] ?? m[2]}`);
  const statuses = statusesOf(pos);
  const days = new Set([...statuses].filter((s) => s === "today" || s === "tomorrow" || s === "tonight"));
  for (const d of days) statuses.delete(d);
  // A status is a change word too ("replied", "delivered"): with something new it is news even when the status was said before.
  const events = new Set<string>([...statuses].map((st) => `status:${st}`));
  // What was checked ("I went over your alerts") is not an event.
  const tokens = withoutChecks(text).match(/[\p{L}\p{N}']+/gu) ?? [];
  tokens.forEach((w, i) => {
    if (!isEvent(w)) return;
    if (/^(new|neu|nuev|nouve|nov|nuov)/.test(w) && newTime.test(tokens[i + 1] ?? "")) return;
    // "as expected", "wie erwartet", "comme prévu": an all-clear, not an event.
    if (/^(as|wie|como|comme|come)$/.test(tokens[i - 1] ?? "")) return;
    events.add(w);
  });
  const affirmed = new Set(pos.match(/[\p{L}\p{N}'-]+/gu) ?? []);
  const named = new Set([...names(text)].filter((n) => affirmed.has(n) || [...affirmed].some((w) => w.replace(/['’]s$/, "") === n)));
  return { facts, counts, statuses, days, names: named, events, words: new Set(contentWords(folded).map(stem)) };
}

/**
 * Words that name nothing the person could act on or learn from: evaluations ("fine", "nominal",
 * "bestens"), encouragement ("proud", "keep", "schaffst"), the routine of checking ("checked",
 * "sweep", "trackers"), pleasantries and time of day. A message whose new words are all of these
 * (and that has no new specific) has no new entity. Anything not listed — "bakery", "plumber",
 * "hospital" — is an entity, so a gap here errs toward sending.
 */
const generic = new Set(
  (
    // en: quantities and pronouns, evaluation, encouragement, routine, pleasantries, time
    "everything everyone everybody anything anyone something nothing things thing stuff lot bit all across board side end bottom top " +
    "fine good great well ok okay normal normally nominal calm quiet quietly smooth smoothly stable steady healthy happy green clear order shape track right perfect perfectly amazing awesome fantastic wonderful wonderfully lovely nice nicely cool excellent solid safe usual expected planned bright fab super grand humming hum along running operating operational working shipshape " +
    "proud believe yourself you stay keep keeping going moving forward positive strong stronger capable consistent focused motivated crush crushing rock rocking progress progressing effort work job step steps win wins journey goal goals dream dreams best hard closer far come counts count matter matters remember kind care self smile breathe relax enjoy fun hope hoping wish luck cheer courage strength motivation inspiration thinking rooting nudge friendly little quick small big every each way path making doing done trust trusting " +
    "tick ticking chugging consistency discipline patience persistence perseverance mindset attitude eye eyes treat treats melde melden remind reminding scheduled schedule gewohnt usual guten hallo hola bonjour salut ola oi ciao buongiorno buenos buenas tardes noches bom boa tarde noite buona sera giornata movement moving remain remains remaining unchanged change changes waiting wait still yet progress " +
    "check checks checked checking checkin sweep swept scan scanned review reviewed looked look looking looks seem seems appear appears went through over round rounds report reporting summary status update updates routine daily weekly hourly heartbeat pulse monitoring monitored watch watching watches watchers watcher trackers tracker monitors monitor systems system services service operations feeds sources errands tasks reminders subscriptions calendar inbox inboxes usual rounds ran passed complete completed finished " +
    "hi hello hey morning afternoon evening night day days week weekend today tonight time moment now currently rest overnight hour thanks thank sure worries worry sorry please dear friend there handle deal happen happening happened say said tell telling let know see hear share want wanted just also really " +
    // de
    "alles alle etwas nichts gut bestens prima super toll ruhig stabil ordnung bereich grunen grun lauft laufen wunderbar schaffst schaffen dran bleib bleiben ziel stolz weiter mut kraft gepruft geprueft nachgesehen kurzer statusbericht bericht morgen tag woche abend " +
    // es
    "parte asi vas va vamos todo toda todos algo nada bien bueno buena genial perfecto normal tranquilo tranquila orden control estable excelente animo puedes sigue seguir adelante orgulloso orgullosa fuerza revise revisado dia semana hoy aqui " +
    // fr
    "tout tous toute toutes quelque chose rien bien bon bonne parfait calme ordre roule stable genial courage continue continuer bravo voie chaque compte cote point petit verifie jour semaine aujourd aujourd'hui signaler " +
    // pt
    "tudo algo nada bem bom boa otimo normal tranquilo ordem controle perfeito forca continuar continue orgulho coragem dia semana hoje aqui " +
    // it
    "tutto tutti qualcosa niente bene buono buona ottimo normale tranquillo ordine posto perfetto regolare forza coraggio continua avanti bravo controllo completato giorno settimana oggi"
  ).split(" ").map(stem),
);

/** A clause that only says a check was made ("I looked over your calendar", "Ich habe alles geprüft"). */
const checkClause =
  /^(?:\W*(?:i|i've|i have|we|ich habe|he|j'ai|eu|ho)\s+)?(?:just\s+|also\s+|again\s+)?(checked|looked|reviewed|scanned|went (?:through|over)|ran|polled|monitored|kept an eye|had (?:a|another) look|gepruft|nachgesehen|revise|revisado|verifie|controllato|verifiquei|checked in)\b.*$/;

/** Function words, contractions and auxiliaries the shared stop list (text.ts) does not cover. */
const functionWords = new Set(
  (
    "one you're you've you'll you'd i'm i've i'll i'd we're we've it's that's there's here's what's let's don't doesn't didn't isn't aren't can't won't how what when where which who why whether while since yet via toward towards another other others more most much many any some such same last next out off up down away back into onto upon ago yesterday ever soon already even " +
    "take takes taking get gets getting got give make makes made put putting bring brings go goes went gone do does did tun mach macht habe hast hat haben musst muss kannst wie dich dir mich mir sich wenn dass weil aber auch schon nur sehr gibt es " +
    "hace hacer haga hagas tengas tenga que como para por con sin mas muy ya tal " +
    "comme ca fait faire faut part cela ceci tres " +
    "faz fazer tem tenha voce " +
    "fa fare hai ho come piu " +
    "het een de en van is op te geen niets nieuws orde vandaag alles"
  ).split(" "),
);

/** Verbs that make a comma-separated part a clause of its own rather than an item of a list. */
const clauseVerb = /\b(is|are|was|were|will|has|have|had|can|could|may|might|must|should|ist|sind|war|wird|werden|hat|es|son|fue|esta|est|sont|sera|va|vont|e|sao|foi|vai|sono|sara|ha)\b/;

/**
 * The folded, negation-blanked text without the clauses that only report a check. A check runs on
 * over the list of what was checked ("went over your alerts, bills and deliveries"): comma-separated
 * items of at most three words after a check that has an object.
 */
function withoutChecks(text: string): string {
  return positive(fold(text))
    .split(/[.!?;:\n]|\s-\s|[\p{Extended_Pictographic}✓✔☑]\uFE0F?/u)
    .map((sentence) => {
      // "…and it will storm tonight": a conjunction before a new subject starts a new clause.
      const parts = sentence.split(/,\s+|\s(?=(?:and|but|und|aber|y|pero|et|mais|ma)\s(?:it|it's|the|a|an|your|there|he|she|they|this|that|es|der|die|das|ein|eine|dein|deine|el|la|los|un|una|tu|il|le|les|une|ton|ta|o|um|uma|seu|sua)\b)/);
      const kept: string[] = [];
      let listing = false;
      for (const part of parts) {
        const p = part.trim();
        if (checkClause.test(p)) {
          listing = contentWords(p.replace(checkClause, "$1")).length < contentWords(p).length;
          continue;
        }
        // A list item names what was checked; a part with a verb of its own is a clause ("and a storm is heading here").
        if (listing && contentWords(p.replace(/^(and|und|y|et|e)\s+/, "")).length <= 3 && !clauseVerb.test(p)) continue;
        listing = false;
        kept.push(p);
      }
      return kept.join(", ");
    })
    .join(". ");
}

/** Content words of `text`, outside negations and clauses that only report a check, stemmed. */
function entityWords(text: string): string[] {
  return withoutChecks(text)
    .split(/[.,]\s*/)
    .flatMap((clause) => contentWords(clause).filter((w) => !functionWords.has(w)).map(stem));
}

/** The status classes `text` affirms: outside negations ("hasn't confirmed" affirms nothing). */
export function affirmedStatuses(text: string): Set<string> {
  return statusesOf(positive(fold(text)));
}

/** The change and event words of `text` outside negations ("arrived", "needs", "cancelled" is a status, not one). */
export function changeWords(text: string): Set<string> {
  return new Set([...specificsOf(text).events].filter((e) => !e.startsWith("status:")));
}

/** What a candidate carries that the known texts did not; empty lists mean no news by shape. */
export interface NewInformation {
  specifics: string[];
  /** Change words, when the candidate also says something not already said (a new content word). */
  changes: string[];
  /** New content words that name something (not evaluation, encouragement, routine or time of day). */
  entities: string[];
}

/**
 * What `text` carries beyond what Familiar already `told` the person (recent messages): new facts,
 * statuses, names; change words it had not reported, or about something new; new entities. The
 * `context` (the goal's title) makes its words and names known, never a status or change: a goal
 * "get my visa approved" does not make "your visa was approved" old news. Counts and day words count
 * only with a change.
 */
export function newInformation(text: string, told: readonly string[], context: readonly string[] = []): NewInformation {
  const mine = specificsOf(text);
  const earlier = told.map(specificsOf);
  const background = context.map(specificsOf);
  const knownWords = new Set([...earlier, ...background].flatMap((k) => [...k.words, ...k.names]));
  const fresh = <K extends keyof Specifics>(key: K, from = earlier) => [...mine[key]].filter((x) => !from.some((k) => k[key].has(x)));
  const newNames = [...mine.names].filter((n) => !knownWords.has(n) && !knownWords.has(stem(n)));
  const specifics = [...fresh("facts", [...earlier, ...background]), ...fresh("statuses").map((s) => `status:${s}`), ...newNames.map((n) => `name:${n}`)];
  const newWords = [...mine.words].filter((w) => !knownWords.has(w) && !mine.events.has(w));
  // A change Familiar has not reported yet is news ("Your parcel arrived."); one it reported is news only about something new.
  const unreported = fresh("events");
  const changes = unreported.length > 0 || (mine.events.size > 0 && newWords.length > 0) ? [...mine.events, ...fresh("counts").map((c) => `count:${c}`), ...fresh("days").map((d) => `day:${d}`)] : [];
  // A subject already said in other words ("package" after "parcel", "Visum" after "visa") is known.
  const knownSubjects = new Set([...told, ...context].flatMap((k) => [...conceptsOf(k)]));
  const entities = [...new Set(entityWords(text))].filter((w) => !knownWords.has(w) && !generic.has(w) && !/^\d/.test(w) && ![...conceptsOf(w)].some((c) => knownSubjects.has(c)));
  return { specifics, changes, entities };
}

/** True when `text` carries nothing beyond what Familiar `told` (and the `context` names) by its shape (see `newInformation`). */
export function carriesNoNews(text: string, told: readonly string[], context: readonly string[] = []): boolean {
  const info = newInformation(text, told, context);
  return info.specifics.length === 0 && info.changes.length === 0 && info.entities.length === 0;
}
