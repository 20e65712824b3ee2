/**
 * The import boundaries of Familiar's tree, checked by dependency-cruiser (`npm run lint`).
 *
 * A *room* is a folder with one door, its `index.ts`: every folder directly under `core/`, `bots/`,
 * `web/`, `sandbox/` and `connectors/`, plus `jobs/`, `app/` and the sub-rooms listed below; the
 * three foundation files `core/clock.ts`, `core/ids.ts` and `core/errors.ts` are rooms of one file.
 * The rules:
 *
 * 1. no cycles, type-only imports included;
 * 2. no arrow from a lower layer up (the layer table below; arrows inside a layer are allowed, and
 *    rule 1 keeps them acyclic);
 * 3. no deep imports across rooms: another room is entered through its door;
 * 4. `core/` never imports `app/`, `bots/`, `web/`, `jobs/`, `connectors/` or `sandbox/`;
 * 5. the adapter families (bots, connectors, jobs, sandbox) import core, never each other, and a
 *    messenger never imports another messenger: the composition root (app/) wires them; the store
 *    adapters and Agenda are imported (for more than their types) by the composition root only;
 * 6. every room is in the layer table (a new core or web room must be given its layer here);
 * 7. the front end (webui/) imports only the leaves it shares with the server.
 *
 * Tests (test/) may import anything; they are not cruised. docs/architecture.md explains the rooms.
 */
const { existsSync, readdirSync, statSync } = require("node:fs");
const { join } = require("node:path");

const root = __dirname;
/** Rooms nested in another room's folder (each has its own door). */
const subRooms = ["core/storage/sqlite", "core/storage/mongo", "jobs/agenda"];
/** Single-file rooms: the foundation every core file may use. */
const foundationFiles = ["core/clock.ts", "core/ids.ts", "core/errors.ts", "core/json.ts"];
/**
 * A core room's records (`records.ts`): the shapes the store keeps, beside the room's logic. They
 * import only the foundation and other rooms' records, so they sit in a layer of their own just
 * above the foundation: the storage ports (which every room's logic imports) and any core file may
 * import them directly without a cycle; outside core/ they are read through the room's door.
 */
const recordsPattern = "^core/[^/]+/records\\.ts$";

/**
 * The layer table, bottom first. A module may import its own layer and the layers below it.
 * Entries are room paths; `bots/*` stands for every room under bots/ (present and future).
 */
const layers = [
  { name: "foundation", rooms: [...foundationFiles, "core/time", "core/log", "core/markdown"] },
  { name: "records", rooms: ["core/*/records.ts"] },
  { name: "core contracts", rooms: ["core/config", "core/model", "core/storage", "core/channels", "core/tools", "core/scheduling"] },
  {
    name: "core subsystems",
    rooms: [
      "core/persons",
      "core/conversation",
      "core/goals",
      "core/memory",
      "core/artifacts",
      "core/audit",
      "core/context",
      "core/notify",
      "core/outbox",
      "core/secrets",
      "core/egress",
      "core/tool-loop",
      "core/tasks",
      "core/policy",
      "core/approvals",
      "core/connections",
    ],
  },
  { name: "core flows", rooms: ["core/sentinel", "core/runtime", "core/inbound"] },
  { name: "store adapters", rooms: ["core/storage/sqlite", "core/storage/mongo"] },
  { name: "HTTP plumbing and shared web leaves", rooms: ["web/shared", "web/http"] },
  { name: "adapters", rooms: ["bots/*", "connectors/*", "sandbox/*", "jobs", "jobs/agenda"] },
  { name: "web surfaces", rooms: ["web/api", "web/local", "web/hooks"] },
  { name: "composition", rooms: ["app"] },
  { name: "entry point", rooms: ["main.ts"] },
];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** Regex source matching every module of a room (a folder room, a `family/*` pattern or a file). */
function roomPattern(room) {
  if (room === "core/*/records.ts") return recordsPattern;
  if (room.endsWith("/*")) return `^${escape(room.slice(0, -1))}[^/]+/`;
  if (room.endsWith(".ts")) return `^${escape(room)}$`;
  return `^${escape(room)}/`;
}

/** Every folder room present now (scanned, so a new folder is covered the day it appears). */
function scanRooms() {
  const rooms = ["app", "jobs", ...subRooms];
  for (const family of ["core", "bots", "web", "sandbox", "connectors"]) {
    const dir = join(root, family);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) if (statSync(join(dir, name)).isDirectory()) rooms.push(`${family}/${name}`);
  }
  return rooms;
}

/** Rule 3, one rule per room: from outside the room, only its door. */
function deepImportRules() {
  return scanRooms().flatMap((room) => {
    const nested = subRooms.filter((s) => s.startsWith(room + "/")).map((s) => `^${escape(s)}/`);
    const door = `^${escape(room)}/index\\.ts$`;
    const comment = `${room} is entered through its door, ${room}/index.ts: import what you need from there (and export it there if it is missing).`;
    const rule = (from, pathNot) => ({ name: "no-deep-import", severity: "error", comment, from, to: { path: `^${escape(room)}/`, pathNot } });
    return [
      rule({ path: "^core/", pathNot: `^${escape(room)}/` }, [door, `^${escape(room)}/records\\.ts$`, ...nested]),
      rule({ pathNot: [`^${escape(room)}/`, "^test/", "^core/"] }, [door, ...nested]),
    ];
  });
}

/** Rule 2, one rule per layer: nothing above it. */
function layerRules() {
  const recordsLayer = layers.findIndex((l) => l.name === "records");
  return layers.slice(0, -1).map((layer, i) => {
    const above = layers.slice(i + 1).flatMap((l) => l.rooms.map(roomPattern));
    // A records file belongs to the records layer whatever room it sits in.
    const from = i === recordsLayer ? { path: recordsPattern } : { path: layer.rooms.map(roomPattern), pathNot: [...above, recordsPattern] };
    return {
      name: "no-upward-import",
      severity: "error",
      comment: `The ${layer.name} layer (${layer.rooms.join(", ")}) may import only its own layer and those below it; it must not import ${layers
        .slice(i + 1)
        .map((l) => l.name)
        .join(", ")}. See the layer table in .dependency-cruiser.cjs and docs/architecture.md.`,
      from,
      to: i >= recordsLayer ? { path: above, pathNot: recordsPattern } : { path: above },
    };
  });
}

const knownRooms = layers.flatMap((l) => l.rooms.map(roomPattern));

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "Import cycles (type-only imports included) make a room impossible to read or test on its own. Move the shared piece down a layer.",
      from: {},
      to: { circular: true },
    },
    ...layerRules(),
    ...deepImportRules(),
    {
      name: "core-imports-core-only",
      severity: "error",
      comment: "core/ is the domain: it defines ports and never imports the composition root, the messengers, the web server, the jobs, the connectors or the sandbox.",
      from: { path: "^core/" },
      to: { path: "^(app|bots|web|jobs|connectors|sandbox)/|^main\\.ts$" },
    },
    {
      name: "store-adapters-from-app-only",
      severity: "error",
      comment: "The SQLite and MongoDB adapters and Agenda are picked by the composition root (app/) from the settings; everything else uses the ports (core/storage, core/scheduling). Types only (a connector's own store on the same driver subset, DbLike) are fine.",
      from: { pathNot: ["^app/", "^test/", "^core/storage/(sqlite|mongo)/", "^jobs/agenda/"] },
      to: { path: ["^core/storage/(sqlite|mongo)/", "^jobs/agenda/"], dependencyTypesNot: ["type-only"] },
    },
    {
      name: "adapters-are-independent",
      severity: "error",
      comment: "bots, connectors, jobs and sandbox import core (messengers also web/http), never each other; app/ wires them together.",
      from: { path: "^(bots|connectors|jobs|sandbox)/" },
      to: { path: "^(bots|connectors|jobs|sandbox)/", pathNot: "^$1/" },
    },
    {
      name: "messengers-are-independent",
      severity: "error",
      comment: "A messenger adapter knows no other messenger; what they share lives in bots/shared.",
      from: { path: "^bots/([^/]+)/", pathNot: "^bots/shared/" },
      to: { path: "^bots/", pathNot: ["^bots/$1/", "^bots/shared/"] },
    },
    {
      name: "room-in-layer-table",
      severity: "error",
      comment: "Every room has a place in the layer table of .dependency-cruiser.cjs: add this one (and a line in docs/architecture.md).",
      from: { path: "^(core|bots|web|jobs|sandbox|connectors|app)/", pathNot: knownRooms },
      to: {},
    },
    {
      name: "room-in-layer-table",
      severity: "error",
      comment: "This import goes to a room that has no place in the layer table of .dependency-cruiser.cjs: add it there (and a line in docs/architecture.md).",
      from: {},
      to: { path: "^(core|bots|web|jobs|sandbox|connectors|app)/", pathNot: knownRooms },
    },
    {
      name: "webui-imports-shared-leaves",
      severity: "error",
      comment: "The front end is bundled for the browser: it may import only core/markdown and web/shared (through their doors).",
      from: { path: "^webui/" },
      to: { path: "^(app|bots|core|jobs|connectors|sandbox|web)/|^main\\.ts$", pathNot: ["^core/markdown/index\\.ts$", "^web/shared/index\\.ts$"] },
    },
    {
      name: "not-to-test",
      severity: "error",
      comment: "Product code never imports tests, fakes or fixtures.",
      from: { pathNot: "^test/" },
      to: { path: "^test/" },
    },
    {
      name: "not-to-unresolvable",
      severity: "error",
      comment: "This import does not resolve to a file or an installed package.",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(dist|node_modules)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"], extensions: [".ts", ".tsx", ".d.ts", ".js", ".mjs", ".cjs"] },
    reporterOptions: {
      dot: {
        collapsePattern: "^(core/[^/]+\\.ts|core/storage/(sqlite|mongo)|core/[^/]+|bots/[^/]+|web/[^/]+|sandbox/[^/]+|connectors/[^/]+|jobs/agenda|jobs|app|webui|main\\.ts)",
      },
    },
  },
};

// The layer table, for tools that draw or check the layers (not part of the config).
Object.defineProperty(module.exports, "layers", { value: layers, enumerable: false });
