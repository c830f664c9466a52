/**
 * The dashboard's picture of what expires when: an SVG bar chart drawn on the server (no script, no
 * inline style: the page's CSP holds), one bar per week for the next 12 weeks. Each bar carries its
 * week and count (`data-count`, a `<title>` for pointer and screen-reader users), and the same numbers
 * follow as a table for those who prefer one.
 */
import type { CertificateSummaryView } from "../../../core/schemas/mod.ts";
import { html, type Html } from "../html.ts";

const WIDTH = 640;
const HEIGHT = 220;
const LEFT = 34;
const RIGHT = 8;
const TOP = 18;
const BOTTOM = 34;
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** "23 Nov" for the UTC day of an ISO timestamp. */
function day(isoTime: string): string {
  return `${Number(isoTime.slice(8, 10))} ${MONTHS[Number(isoTime.slice(5, 7)) - 1]}`;
}

export function expiryChart(weeks: CertificateSummaryView["expiringPerWeek"], mode: string): Html {
  const total = weeks.reduce((sum, week) => sum + week.count, 0);
  const max = Math.max(1, ...weeks.map((week) => week.count));
  // A whole-number scale: the top line is the largest count rounded up to a multiple of a nice step.
  const step = niceStep(max / 4);
  const top = Math.ceil(max / step) * step;
  const plotWidth = WIDTH - LEFT - RIGHT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = plotWidth / weeks.length;
  const barWidth = slot * 0.7;
  const y = (count: number) => TOP + plotHeight - (count / top) * plotHeight;
  const ticks: number[] = [];
  for (let value = 0; value <= top; value += step) ticks.push(value);
  const description =
    total === 0
      ? "No certificate expires in the next 12 weeks."
      : `${total} certificate${total === 1 ? "" : "s"} ${total === 1 ? "expires" : "expire"} in the next 12 weeks: ` +
        weeks.filter((w) => w.count > 0).map((w) => `${w.count} in the week from ${day(w.from)}`).join(", ") + ".";
  return html`<figure class="chart">
<figcaption id="chart-caption">Certificates expiring in each of the next 12 weeks (${mode})</figcaption>
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="chart-title chart-desc" data-total="${total}">
<title id="chart-title">Certificates expiring per week, next 12 weeks</title>
<desc id="chart-desc">${description}</desc>
<g class="grid">${ticks.map(
    (value) => html`<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y(value).toFixed(1)}" y2="${y(value).toFixed(1)}"></line><text class="tick" x="${LEFT - 6}" y="${(y(value) + 4).toFixed(1)}" text-anchor="end">${value}</text>`,
  )}</g>
<g class="bars">${weeks.map((week, i) => {
    const x = LEFT + i * slot + (slot - barWidth) / 2;
    const label = `Week from ${day(week.from)}: ${week.count} certificate${week.count === 1 ? "" : "s"}`;
    return html`<g class="week${i % 2 === 1 ? " odd" : ""}"><rect class="bar${week.count > 0 ? " some" : ""}" x="${x.toFixed(1)}" y="${y(week.count).toFixed(1)}" width="${barWidth.toFixed(1)}"
height="${(TOP + plotHeight - y(week.count)).toFixed(1)}" data-week="${i}" data-from="${week.from}" data-count="${week.count}"><title>${label}</title></rect>
${week.count > 0 ? html`<text class="value" x="${(x + barWidth / 2).toFixed(1)}" y="${(y(week.count) - 4).toFixed(1)}" text-anchor="middle">${week.count}</text>` : ""}
<text class="label" x="${(x + barWidth / 2).toFixed(1)}" y="${HEIGHT - BOTTOM + 16}" text-anchor="middle">${day(week.from)}</text></g>`;
  })}</g>
</svg>
<details><summary>The same numbers as a table</summary>
<div class="table-wrap"><table><thead><tr><th scope="col">Week from</th><th scope="col">until</th><th scope="col">Certificates expiring</th></tr></thead>
<tbody>${weeks.map((w) => html`<tr><td>${w.from.slice(0, 10)}</td><td>${w.until.slice(0, 10)}</td><td class="num">${w.count}</td></tr>`)}</tbody></table></div>
</details>
</figure>`;
}

/** The smallest of 1, 2, 5, 10, 20, 50, … that is at least `rough`. */
function niceStep(rough: number): number {
  for (let magnitude = 1; ; magnitude *= 10) {
    for (const factor of [1, 2, 5]) if (factor * magnitude >= rough) return factor * magnitude;
  }
}
