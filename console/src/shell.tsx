/** The frame of every page: skip link, navigation, team switcher, sign-out. */
import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { useSession } from './session';

const SECTIONS = [
  ['Runs', '/runs'],
  ['Factories', '/factories'],
  ['Schedules', '/schedules'],
  ['Webhooks', '/webhooks'],
  ['Analytics', '/analytics'],
  ['Scorers', '/scorers'],
  ['Benchmarks', '/benchmarks'],
  ['Inbox', '/inbox'],
  ['Audit', '/audit'],
  ['Team', '/team'],
] as const;

function TeamSwitcher() {
  const session = useSession();
  if (session.teams.length < 2) return <span class="team-name">{session.team?.name ?? 'No team'}</span>;
  return (
    <label class="team-switcher">
      Team{' '}
      <select value={session.team?.uid} onChange={(e) => session.setTeam(e.currentTarget.value)}>
        {session.teams.map((t) => (
          <option key={t.uid} value={t.uid}>
            {t.name}
          </option>
        ))}
      </select>
    </label>
  );
}

export function Shell({ children }: { children: ComponentChildren }) {
  const { path } = useLocation();
  const session = useSession();
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/runs">
          Shopfloor
        </a>
        <nav aria-label="Sections">
          <ul class="inline">
            {SECTIONS.map(([name, href]) => (
              <li key={href}>
                <a href={href} aria-current={path === href || path.startsWith(`${href}/`) ? 'page' : undefined}>
                  {name}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <TeamSwitcher />
          <button type="button" class="link" onClick={() => void session.signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
