// Renders a host again whenever the backups' state changes (src/app/backups.ts), for as long as
// the host is connected and follows the same Backups.
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type { Backups } from '../app/backups';

export class BackupsController implements ReactiveController {
  private followed: Backups | undefined;
  private unsubscribe: (() => void) | undefined;
  private connected = false;

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly backups: () => Backups | undefined,
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    this.connected = true;
    this.listen();
  }

  hostDisconnected(): void {
    this.connected = false;
    this.listen();
  }

  /** Before each render: follows the host's current Backups. */
  hostUpdate(): void {
    if (this.backups() !== this.followed) this.listen();
  }

  private listen(): void {
    this.unsubscribe?.();
    this.followed = this.connected ? this.backups() : undefined;
    this.unsubscribe = this.followed?.subscribe(() => this.host.requestUpdate());
  }
}
