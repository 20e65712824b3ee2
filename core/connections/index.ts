/**
 * Connections: a person's links to outside services they read and act on (mailboxes, calendars).
 * The room keeps the records (core/storage), the credentials (the person's vault — never the model,
 * a log or an error), the capabilities the person grants one by one (and so which tools the model is
 * offered), FAMILIAR_CONFIG's `connections` (moved into the vault at start) and the one-time
 * `/connect` links. The kinds themselves (`email`, `caldav`, `ics`) are defined by their connectors
 * through the {@link ConnectionKind} port; this room knows no protocol.
 */
export { Connections, connectionSecretName, type ConnectInput, type ConnectResult, type ConnectionsDeps } from "./connections.js";
export { importConfiguredConnections, type ImportReport } from "./configured.js";
export { CONNECT_LINK_TTL_MS, ConnectDesk, type ConnectSubmit } from "./desk.js";
export type { CapabilityInfo, ConnectionForm, ConnectionKind, ConnectionTest, FormField } from "./kinds.js";
export type { Connection, ConnectionChange, ConnectionPatch, ConnectionStatus, NewConnection, NewConnectionChange } from "./records.js";
export { describeStatus, type StatusWords } from "./status-words.js";
