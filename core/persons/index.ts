/**
 * Persons: who Familiar serves and each of their accounts on a messenger (identities), their
 * settings (time zone, proactivity, quiet hours, where to reach them), roles and allowed groups. The
 * room holds the records; the store keeps them (core/storage ports) and the inbound door
 * (core/inbound) pairs accounts with persons. It must not hold flows: it is read by everything.
 */
export { type ReachPreference } from "./records.js";
export { type Actor, type GroupRef, type Identity, type NewPerson, type Person, type PersonRole, type PersonSettingsPatch, type Proactivity, type QuietHours } from "./records.js";
