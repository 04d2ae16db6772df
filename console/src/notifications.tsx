import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useState } from 'preact/hooks';

export interface Notice {
  id: number;
  title: string;
  text: string;
  kind: 'error' | 'info';
}

const NotifyContext = createContext<{ notices: Notice[]; notify: (notice: Omit<Notice, 'id'>) => void; dismiss: (id: number) => void }>({
  notices: [],
  notify: () => {},
  dismiss: () => {},
});

let nextId = 1;

export function NotificationsProvider({ children }: { children: ComponentChildren }) {
  const [notices, setNotices] = useState<Notice[]>([]);
  const dismiss = useCallback((id: number) => setNotices((list) => list.filter((notice) => notice.id !== id)), []);
  // information goes by itself after a while; an error stays until dismissed
  const notify = useCallback(
    (notice: Omit<Notice, 'id'>) => {
      const id = nextId++;
      setNotices((list) => [...list, { ...notice, id }]);
      if (notice.kind === 'info') setTimeout(() => dismiss(id), 10_000);
    },
    [dismiss],
  );
  return <NotifyContext.Provider value={{ notices, notify, dismiss }}>{children}</NotifyContext.Provider>;
}

export const useNotify = () => useContext(NotifyContext).notify;

/** An error notification titled `title`, for `run`'s onError: `fail('New user failed')`. */
export function useFail(): (title: string) => (message: string) => void {
  const notify = useNotify();
  return (title) => (message) => notify({ kind: 'error', title, text: message });
}

/** The notifications of the session: errors are alerts (read out at once), the others polite. */
export function Notifications() {
  const { notices, dismiss } = useContext(NotifyContext);
  return (
    <section class="notices" aria-label="Notifications">
      {notices.map((notice) => (
        <div class={`notice ${notice.kind}`} role={notice.kind === 'error' ? 'alert' : 'status'} key={notice.id}>
          <strong>{notice.title}</strong>
          <span>{notice.text}</span>
          <button type="button" aria-label={`Dismiss: ${notice.title}`} onClick={() => dismiss(notice.id)}>
            ×
          </button>
        </div>
      ))}
    </section>
  );
}
