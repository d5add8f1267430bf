// A destructive action (docs/configurator-site.md, "Destructive actions"): a button in the danger
// style that does nothing by itself but open an in-page confirmation saying what will be lost; only
// its own danger button acts, and Cancel, which takes the focus, closes it. In the page rather than
// window.confirm: it can name the thing, is read out (role=alertdialog), and is styled and tested like
// the rest of the page.
import type { ComponentChildren, RefObject } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { Button } from '../../../../web-common/browser/fields.tsx';

export interface ConfirmProps {
  /** What will be lost, said in full. */
  loss: ComponentChildren;
  /** The button that acts ("Delete for good"). */
  confirmLabel: string;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}

/** The confirmation itself, for a caller that places it apart from its button (a table's row below). */
export function Confirm({ loss, confirmLabel, busy, onConfirm, onCancel }: ConfirmProps) {
  const cancel = useRef<HTMLButtonElement>(null);
  const text = useId();
  useEffect(() => cancel.current?.focus(), []);
  return (
    <div class="confirm danger" role="alertdialog" aria-label={`Confirm: ${confirmLabel}`} aria-describedby={text}>
      <p id={text}>{loss}</p>
      <Button class="danger" busy={busy} onClick={onConfirm}>
        {confirmLabel}
      </Button>
      <button type="button" class="secondary" ref={cancel} onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}

/** The button that opens a confirmation (danger style; says it opens one). */
export function DangerButton({ label, ariaLabel, busy, disabled, opener, onOpen }: { label: ComponentChildren; ariaLabel?: string; busy?: boolean; disabled?: boolean; opener: RefObject<HTMLButtonElement | null>; onOpen: () => void }) {
  return (
    <button type="button" class="danger" ref={opener} aria-label={ariaLabel} aria-haspopup="dialog" aria-busy={busy ? 'true' : undefined} disabled={busy || disabled} onClick={onOpen}>
      {label}
    </button>
  );
}

/** A danger button and its confirmation, in the same place. */
export function DangerAction({ label, ariaLabel, disabled, ...confirm }: Omit<ConfirmProps, 'onCancel'> & { label: ComponentChildren; ariaLabel?: string; disabled?: boolean }) {
  const [open, setOpen] = useState(false);
  const opener = useRef<HTMLButtonElement>(null);
  const wasOpen = useRef(false);
  // Closing gives the focus back to the button that opened it (and only closing: not the first render).
  useEffect(() => {
    if (!open && wasOpen.current) opener.current?.focus({ preventScroll: true });
    wasOpen.current = open;
  }, [open]);
  if (!open) return <DangerButton label={label} ariaLabel={ariaLabel} busy={confirm.busy} disabled={disabled} opener={opener} onOpen={() => setOpen(true)} />;
  return (
    <Confirm
      {...confirm}
      onConfirm={() => {
        setOpen(false);
        confirm.onConfirm();
      }}
      onCancel={() => setOpen(false)}
    />
  );
}
