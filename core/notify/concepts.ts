import { contentWords, fold, stem } from "./text.js";

/**
 * The subjects a message is about (a bill, electricity, the landlord, a parcel…), as
 * language-independent concept ids, so that a translation of something already said is recognised
 * when it has no numbers, times or codes to compare ("Dein Vermieter hat auf deine E-Mail wegen der
 * Kaution geantwortet" after "Your landlord replied to your email about the deposit"), and two
 * messages about different subjects in the same words are told apart ("water bill" vs
 * "electricity bill"). Covers everyday subjects of a personal agent's monitors in English, German,
 * Spanish, French, Portuguese and Italian; German compounds match by their parts
 * ("Stromrechnung" → electricity + bill).
 */
const lexicon: Record<string, string> = {
  bill: "bill invoice rechnung factura recibo facture conta fatura bolletta fattura",
  electricity: "electricity electric power strom electricidad electricite elettricita luce energia luz",
  water: "water wasser agua eau acqua",
  gas: "gas gaz",
  internet: "internet broadband wifi wlan",
  phone: "phone mobile handy telefon telefono movil telephone portable telefone celular cellulare",
  rent: "rent miete alquiler loyer aluguel aluguer affitto",
  landlord: "landlord vermieter vermieterin casero casera arrendador proprietaire bailleur senhorio locador padrone",
  deposit: "deposit kaution fianza deposito caution depot caucao cauzione",
  email: "email e-mail mail correo courriel",
  parcel: "parcel package paket sendung paquete colis pacote pacco",
  order: "order bestellung pedido commande encomenda ordine",
  flight: "flight flug vuelo vol voo volo",
  train: "train zug tren trem comboio treno",
  bus: "bus autobus onibus",
  meeting: "meeting besprechung reunion reuniao riunione",
  appointment: "appointment termin cita rendez-vous consulta appuntamento",
  payment: "payment zahlung pago paiement pagamento",
  price: "price fare preis precio tarifa prix tarif preco prezzo",
  school: "school schule escuela colegio ecole escola scuola",
  dentist: "dentist zahnarzt zahnarztin dentista dentiste",
  doctor: "doctor arzt arztin medico medecin",
  rain: "rain regen lluvia pluie chuva pioggia",
  umbrella: "umbrella regenschirm schirm paraguas parapluie guarda-chuva ombrello",
  visa: "visa visum visado visto",
  passport: "passport reisepass pasaporte passeport passaporte passaporto",
  insurance: "insurance versicherung seguro assurance assicurazione",
  car: "car auto wagen coche voiture carro macchina",
  ticket: "ticket fahrkarte billete boleto billet bilhete biglietto",
  tax: "tax steuer impuesto impot imposto tasse tassa",
  salary: "salary gehalt lohn salario sueldo salaire stipendio",
  card: "card karte tarjeta carte cartao carta",
  refund: "refund erstattung ruckerstattung reembolso remboursement rimborso",
  subscription: "subscription abo abonnement suscripcion assinatura abbonamento",
  birthday: "birthday geburtstag cumpleanos anniversaire aniversario compleanno",
  hotel: "hotel albergo",
  reply: "reply replied answer answered response geantwortet antwortete beantwortet respondio contesto repondu respondeu rispose antwort respuesta reponse resposta risposta",
  status: "status estado statut situacao stato",
  application: "application antrag solicitud candidatura",
  weather: "weather wetter meteo clima",
  storm: "storm sturm unwetter tormenta tempete tempestade tempesta",
  delivery: "delivery lieferung zustellung entrega livraison consegna",
};

const byWord = new Map<string, string>();
for (const [concept, words] of Object.entries(lexicon)) for (const w of words.split(" ")) byWord.set(stem(fold(w)), concept);
/** Words long enough to be recognised as part of a German compound. */
const compoundParts = [...byWord.entries()].filter(([w]) => w.length >= 5);

/** The concept ids of the subjects `text` mentions (elisions such as "d'électricité" are read as the word). */
export function conceptsOf(text: string): Set<string> {
  const out = new Set<string>();
  for (const raw of contentWords(text.replace(/\b(?:d|l|qu|dell|all|nell|dall|sull)['’]/gi, ""))) {
    const w = stem(raw);
    const direct = byWord.get(w) ?? byWord.get(raw);
    if (direct) {
      out.add(direct);
      continue;
    }
    if (w.length < 8) continue;
    for (const [part, concept] of compoundParts) if (w.length > part.length + 2 && (w.startsWith(part) || w.endsWith(part))) out.add(concept);
  }
  return out;
}

/** Content words (stemmed, as in `Analysis.words`) with every word of the lexicon replaced by its concept id. */
export function normaliseWords(words: Set<string>): Set<string> {
  return new Set([...words].map((w) => (byWord.has(w) ? `@${byWord.get(w)}` : w)));
}

/** True when each text names a subject the other does not (e.g. a water bill and an electricity bill). */
export function differentSubjects(a: Set<string>, b: Set<string>): boolean {
  return [...a].some((x) => !b.has(x)) && [...b].some((x) => !a.has(x));
}
