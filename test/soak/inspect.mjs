import Database from "better-sqlite3";
const db = new Database(process.argv[2] + "/familiar.db", { readonly: true });
const label = process.argv[3];
const pid = db.prepare("select person_id from messages where text like ? and role='user'").get(`%${label} %`)?.person_id ?? db.prepare("select person_id from messages where text like ? and role='user'").get(`%${label}`)?.person_id;
console.log(pid);
for (const r of db.prepare("select seq, role, substr(text,1,70) t, task_id, at from messages where person_id=? order by seq").all(pid)) console.log(r.seq, r.role, r.t, r.task_id ? r.task_id.slice(-6) : "", new Date(r.at).toISOString().slice(11, 23));
console.log("--- turn tasks");
for (const r of db.prepare("select id, status, checkpoint, created_at, updated_at, outcome from tasks where person_id=? and kind='turn' order by created_at").all(pid)) {
  const cp = JSON.parse(r.checkpoint); const rt = cp.runtime ?? {};
  console.log(r.id.slice(-6), r.status, cp.fromSeq, cp.toSeq, "act", rt.activation, "res", rt.resumes, "hor", rt.horizonSeq, new Date(r.created_at).toISOString().slice(11, 23), (r.outcome ?? "").slice(0, 40));
}
