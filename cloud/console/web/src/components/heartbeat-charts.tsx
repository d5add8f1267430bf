// A device's heartbeats as two small charts (docs/device-health.md): the chip heap's largest free block
// (what the next allocation can get) and the XS chunk heap in use, in KB; and the Wi-Fi RSSI in dBm, with
// a gap where a heartbeat had none (a controller on Ethernet).
import { reportTime } from '../health-text.ts';
import type { Heartbeat, TimelineEntry } from '../types.ts';
import { TimeChart } from './time-chart.tsx';

const kb = (v: number) => (Math.abs(v) >= 100 || Number.isInteger(v) ? v.toFixed(0) : v.toFixed(1));

export function HeartbeatCharts({ beats }: { beats: (TimelineEntry & { report: Heartbeat })[] }) {
  if (beats.length === 0) return <p class="muted empty">No heartbeat in these reports.</p>;
  // Oldest first, by the board's time (the cloud's when the board had no clock yet).
  const points = beats.map((e) => ({ t: Date.parse(reportTime(e)), h: e.report })).sort((a, b) => a.t - b.t);
  const noRssi = points.every((p) => p.h.rssi === null);
  return (
    <div class="charts">
      <TimeChart
        title="Heap"
        unit="KB"
        format={kb}
        fromZero
        series={[
          { name: 'largest free block', cls: 's-block', points: points.map((p) => ({ t: p.t, v: p.h.block / 1024 })) },
          { name: 'XS chunk heap in use', cls: 's-chunk', points: points.map((p) => ({ t: p.t, v: p.h.chunk / 1024 })) },
        ]}
      />
      {noRssi ? (
        <p class="muted empty">RSSI: no heartbeat carried one (a controller on Ethernet).</p>
      ) : (
        <TimeChart title="RSSI" unit="dBm" format={(v) => v.toFixed(0)} series={[{ name: 'RSSI', cls: 's-rssi', points: points.map((p) => ({ t: p.t, v: p.h.rssi })) }]} />
      )}
    </div>
  );
}
