import { runSoak } from "./soak.js";
const r = await runSoak({ log: (l) => console.error(l), durationMs: 75_000, seed: 4242, localUsers: 2, telegramUsers: 2, messageGapMs: [1000, 4000], killGapMs: [1000, 6000], lateBoundMs: 30000 });
console.log(JSON.stringify({ ...r, uncertain: r.uncertain.length }, null, 1));
