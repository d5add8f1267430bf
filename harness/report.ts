// The bench report: a table on the terminal, bench-report/index.html for people (steps, verdicts,
// timings, OLED pictures at key steps, event-log excerpts, figures) and junit.xml for CI. Both open
// with what was tested (harness/testbed.ts): rig file, boards and their firmware, commit, versions.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchRun, ScenarioResult } from './runner.ts';
import type { Testbed, TestbedBoard } from './testbed.ts';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function summaryTable(run: BenchRun): string {
  const rows = run.results.map((r) => {
    const verdict = r.status === 'passed' ? 'PASS' : r.status === 'failed' ? 'FAIL' : 'n/a';
    return `${verdict.padEnd(5)} ${r.name.padEnd(36)} ${String(r.ms).padStart(7)} ms  ${r.status === 'failed' ? `at "${r.failedStep}": ${r.error}` : (r.reason ?? '')}`;
  });
  const passed = run.results.filter((r) => r.status === 'passed').length;
  const failed = run.results.filter((r) => r.status === 'failed').length;
  const figures = run.results.flatMap((r) => Object.entries(r.figures).map(([k, v]) => `  ${k}: ${v}`));
  return [
    `rig ${run.rig.name}: ${run.results.length} scenarios in ${(run.ms / 1000).toFixed(1)} s`,
    ...rows,
    ...(figures.length ? ['figures:', ...figures] : []),
    `${passed} passed, ${failed} failed`,
  ].join('\n');
}

const firmwareText = (b: TestbedBoard) => {
  const f = b.firmware;
  return [`${f.version} (${f.build})`, f.imageSha256 ? `image SHA-256 ${f.imageSha256}` : 'image SHA-256 unknown', f.idfVersion ? `idf_ver ${f.idfVersion}` : '', f.source].filter(Boolean).join(', ');
};

/** The facts of a run, as name/value pairs: one source for the HTML table and the JUnit properties. */
export function testbedFacts(t: Testbed): [string, string][] {
  return [
    ['rig', t.rigName],
    ['rig.file', t.rigFile],
    ...(t.rigSha256 ? [['rig.file.sha256', t.rigSha256] as [string, string]] : []),
    ['project.commit', t.commit],
    ['node', t.node],
    ...t.software.map((s): [string, string] => [`software.${s.name}`, s.version]),
    ...t.boards.flatMap((b): [string, string][] => [
      [`board.${b.id}`, `${b.role}, ${b.kind} ${b.chip}, ${b.where}, UUID ${b.uuid}`],
      [`board.${b.id}.firmware.version`, b.firmware.version],
      [`board.${b.id}.firmware.build`, b.firmware.build],
      [`board.${b.id}.firmware.sha256`, b.firmware.imageSha256 ?? 'unknown'],
      [`board.${b.id}.firmware.source`, b.firmware.source],
    ]),
  ];
}

function testbedHtml(t: Testbed): string {
  const boards = t.boards
    .map((b) => `<tr><td>${esc(b.id)}</td><td>${esc(b.role)}</td><td>${esc(`${b.kind} ${b.chip}`)}</td><td>${esc(b.where)}</td><td>${esc(b.uuid)}</td><td>${esc(firmwareText(b))}</td></tr>`)
    .join('');
  const software = t.software.map((s) => `${esc(s.name)} ${esc(s.version)}`).join(' · ');
  return `<section id="testbed"><h2>What was tested</h2>
<table class="testbed"><tr><th>rig file</th><td>${esc(t.rigFile)}${t.rigSha256 ? ` <small>SHA-256 ${esc(t.rigSha256)}</small>` : ''}</td></tr>
<tr><th>project commit</th><td>${esc(t.commit)}</td></tr>
<tr><th>Node</th><td>${esc(t.node)}</td></tr>
<tr><th>engines and SDKs</th><td>${software}</td></tr></table>
<table class="boards"><tr><th>board</th><th>role</th><th>kind</th><th>where</th><th>UUID</th><th>firmware</th></tr>${boards}</table>
</section>`;
}

function scenarioHtml(r: ScenarioResult): string {
  const verdict = r.status === 'passed' ? 'passed' : r.status === 'failed' ? 'failed' : 'not applicable on this rig';
  const steps = r.steps
    .map((st) => {
      const shots = st.snapshots
        .map(
          (s) => `<figure><img src="${esc(s.file)}" alt="${esc(s.lines.join(' / '))}" width="384" height="192"><figcaption>${esc(s.board)}: ${esc(s.label)}</figcaption>${
            s.events.length ? `<pre>${esc(s.events.join('\n'))}</pre>` : ''
          }</figure>`,
        )
        .join('');
      const consoles = (st.consoles ?? []).map((c) => `<a href="${esc(c.file)}">${esc(c.board)} console</a>`).join(' · ');
      return `<li class="${st.ok ? 'ok' : 'bad'}"><span>${st.ok ? '✓' : '✗'}</span> ${esc(st.name)} <small>${st.ms} ms</small>${st.error ? `<div class="err">${esc(st.error)}</div>` : ''}${consoles ? `<div class="consoles">${consoles}</div>` : ''}${shots ? `<div class="shots">${shots}</div>` : ''}</li>`;
    })
    .join('\n');
  const figures = Object.entries(r.figures)
    .map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(String(v))}</td></tr>`)
    .join('');
  return `<section id="${esc(r.name)}" class="${r.status}">
<h2>${esc(r.title)} <span class="verdict">${verdict}</span></h2>
<p class="meta">${esc(r.name)} · ${r.ms} ms${r.reason ? ` · ${esc(r.reason)}` : ''}${r.status === 'failed' ? ` · failed at “${esc(r.failedStep ?? '')}”: ${esc(r.error ?? '')}` : ''}</p>
<ol>${steps}</ol>${figures ? `<table class="figures">${figures}</table>` : ''}
</section>`;
}

export function writeReport(run: BenchRun, dir: string): void {
  const passed = run.results.filter((r) => r.status === 'passed').length;
  const failed = run.results.filter((r) => r.status === 'failed').length;
  const rows = run.results
    .map((r) => `<tr class="${r.status}"><td><a href="#${esc(r.name)}">${esc(r.title)}</a></td><td>${r.status.replace('_', ' ')}</td><td>${r.ms} ms</td></tr>`)
    .join('');
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Bench report: ${esc(run.rig.name)}</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:70rem;padding:0 1rem;color:#1b1f24}
h1{margin-bottom:.2rem} .meta{color:#57606a} table{border-collapse:collapse;margin:.6rem 0}
td,th{padding:.25rem .7rem;border-bottom:1px solid #d0d7de;text-align:left}
tr.passed td:nth-child(2),.passed .verdict{color:#1a7f37} tr.failed td:nth-child(2),.failed .verdict{color:#cf222e}
tr.not_applicable td:nth-child(2),.not_applicable .verdict{color:#8c959f}
section{border-top:2px solid #d0d7de;margin-top:1.6rem} .verdict{font-size:.8em;margin-left:.5rem}
li{margin:.35rem 0} li.ok>span{color:#1a7f37} li.bad>span{color:#cf222e} small{color:#57606a}
.err{color:#cf222e;font-family:monospace;white-space:pre-wrap} .shots{display:flex;flex-wrap:wrap;gap:1rem;margin:.4rem 0}
figure{margin:0} figcaption{font-size:.85em;color:#57606a} pre{font-size:.75em;background:#f6f8fa;padding:.4rem;max-width:384px;white-space:pre-wrap;word-break:break-all}
img{image-rendering:pixelated;border:1px solid #444}
</style></head><body>
<h1>Bench report: rig ${esc(run.rig.name)}</h1>
<p class="meta">${esc(run.rig.description)}<br>Started ${esc(run.startedAt)} · ${(run.ms / 1000).toFixed(1)} s · <strong>${passed} passed, ${failed} failed</strong>, ${run.results.length - passed - failed} not applicable</p>
${testbedHtml(run.testbed)}
<table><tr><th>scenario</th><th>verdict</th><th>wall time</th></tr>${rows}</table>
${run.results.map(scenarioHtml).join('\n')}
</body></html>`;
  writeFileSync(join(dir, 'index.html'), html);
  const cases = run.results
    .map((r) => {
      const inner =
        r.status === 'failed'
          ? `<failure message="${esc(`${r.failedStep}: ${r.error}`)}">${esc(r.steps.map((s) => `${s.ok ? 'ok  ' : 'FAIL'} ${s.name} (${s.ms} ms)${s.error ? `: ${s.error}` : ''}`).join('\n'))}</failure>`
          : r.status === 'not_applicable'
            ? `<skipped message="${esc(r.reason ?? '')}"/>`
            : '';
      return `  <testcase classname="bench.${esc(run.rig.name)}" name="${esc(r.name)}" time="${(r.ms / 1000).toFixed(3)}">${inner}</testcase>`;
    })
    .join('\n');
  const junit = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="bench ${esc(run.rig.name)}" tests="${run.results.length}" failures="${failed}" skipped="${run.results.length - passed - failed}" time="${(run.ms / 1000).toFixed(3)}" timestamp="${esc(run.startedAt)}">
  <properties>
${testbedFacts(run.testbed).map(([name, value]) => `    <property name="${esc(name)}" value="${esc(value)}"/>`).join('\n')}
  </properties>
${cases}
</testsuite>
`;
  writeFileSync(join(dir, 'junit.xml'), junit);
}
