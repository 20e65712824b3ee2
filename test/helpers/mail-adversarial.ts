/**
 * Adversarial mail bodies of about 5 MB for the mail-safety filter: shapes that make naive
 * scanners quadratic or backtracking regexes explode. Each hides one real one-time code near its
 * start (`CODE`), so a test can check the filter still removes it. Used by the filter test (which
 * only asserts completion and correctness) and the bench (which times them).
 */

/** The code every adversarial body hides after "Your verification code is". */
export const ADVERSARIAL_CODE = "590371";

const MB5 = 5 * 1024 * 1024;

function fill(unit: string, bytes = MB5): string {
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
}

const head = `Your verification code is ${ADVERSARIAL_CODE}.\n\n`;

/** Name → { text or html } of about 5 MB. */
export function adversarialBodies(): { name: string; text?: string; html?: string }[] {
  return [
    { name: "spaced-digits", text: head + fill("1 2 3 4 ") },
    { name: "one-long-line-of-words", text: head + fill("code verify sign in password token order ") },
    { name: "digit-run", text: head + fill("9") },
    { name: "alnum-run", text: head + fill("a1") },
    { name: "at-signs", text: head + fill("a@a.") },
    { name: "url-soup", text: head + fill("https://t.example/c/Ab12Cd34Ef56Gh78?token=Xy98Zw76 ") },
    { name: "codes-everywhere", text: head + fill("Your code: 482917. ") },
    { name: "newlines", text: head + fill("\n") },
    { name: "anchors", html: `<p>${head}</p>` + fill('<a href="https://click.example/ls/click?upn=Q1w2E3r4T5y6U7i8">Sign in</a> ') },
    { name: "deep-nesting", html: `<p>${head}</p>` + fill("<div>", MB5 / 2) + fill("</div>", MB5 / 2) },
    { name: "table-cells", html: `<p>${head}</p><table><tr>` + fill("<td>7</td>") + "</tr></table>" },
    { name: "entities", html: `<p>${head}</p>` + fill("&#56;&#52;&amp;&nbsp;") },
  ];
}
