// A destructive action (docs/configurator-site.md, "Destructive actions"): a button in the danger
// style that does nothing by itself but open an in-page confirmation saying what will be lost; only
// its own danger button acts, and Cancel closes it. In the page rather than window.confirm: it can
// name the thing, is read out (role=alertdialog), and is styled and tested like the rest.
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { Button } from '../../../../web-common/browser/fields.tsx';

export interface DangerActionProps {
  /** The button that opens the confirmation ("Delete the cloud backup", "Remove…"). */
  label: ComponentChildren;
  /** Its accessible name when the label alone does not say what ("Remove 9f3c…"). */
  ariaLabel?: string;
  /** What will be lost, said in full. */
  loss: ComponentChildren;
  /** The button that acts ("Delete for good"). */
  confirmLabel: string;
  busy?: boolean;
  disabled?: boolean;
  onConfirm: () => void;
}

export function DangerAction({ label, ariaLabel, loss, confirmLabel, busy, disabled, onConfirm }: DangerActionProps) {
  const [open, setOpen] = useState(false);
  const cancel = useRef<HTMLButtonElement>(null);
  const opener = useRef<HTMLButtonElement>(null);
  const text = useId();
  // The confirmation takes the focus on Cancel, the safe choice; closing gives it back.
  useEffect(() => {
    if (open) cancel.current?.focus();
  }, [open]);
  const close = () => {
    setOpen(false);
    opener.current?.focus();
  };
  if (!open) {
    return (
      <button type="button" class="danger" ref={opener} aria-label={ariaLabel} aria-haspopup="dialog" aria-busy={busy ? 'true' : undefined} disabled={busy || disabled} onClick={() => setOpen(true)}>
        {label}
      </button>
    );
  }
  return (
    <div class="confirm danger" role="alertdialog" aria-label={`Confirm: ${confirmLabel}`} aria-describedby={text}>
      <p id={text}>{loss}</p>
      <Button
        class="danger"
        busy={busy}
        onClick={() => {
          setOpen(false);
          onConfirm();
        }}
      >
        {confirmLabel}
      </Button>
      <button type="button" class="secondary" ref={cancel} onClick={close}>
        Cancel
      </button>
    </div>
  );
}
