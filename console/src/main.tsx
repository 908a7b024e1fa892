/** The console: the session, the shell (navigation, team switcher, sign-out) and a lazy page per URL. */
import { render } from 'preact';
import { ErrorBoundary, LocationProvider, lazy, Route, Router, useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { api, onSignedOut, setActiveTeam } from './api';
import { followTeam, stopLive } from './live';
import { SignIn } from './pages/sign-in';
import { rememberedTeam, rememberTeam, SessionContext, type SessionInfo, type Team } from './session';
import { Shell } from './shell';
import { Loading } from './ui/status';
import './styles.css';

const Runs = lazy(() => import('./pages/runs'));
const Run = lazy(() => import('./pages/run'));
const Factories = lazy(() => import('./pages/factories'));
const Factory = lazy(() => import('./pages/factory'));
const Task = lazy(() => import('./pages/task'));
const Schedules = lazy(() => import('./pages/schedules'));
const Webhooks = lazy(() => import('./pages/webhooks'));
const Deliveries = lazy(() => import('./pages/deliveries'));
const Attempts = lazy(() => import('./pages/attempts'));
const Analytics = lazy(() => import('./pages/analytics'));
const Scorers = lazy(() => import('./pages/scorers'));
const Benchmarks = lazy(() => import('./pages/benchmarks'));
const BenchmarkRun = lazy(() => import('./pages/benchmark-run'));
const Inbox = lazy(() => import('./pages/inbox'));
const Audit = lazy(() => import('./pages/audit'));
const TeamPage = lazy(() => import('./pages/team'));
const NotFound = lazy(() => import('./pages/not-found'));

interface SessionAnswer {
  user_uid: string;
  teams: Array<{ uid: string; role: Team['role'] }>;
}

function Redirect({ to }: { to: string }) {
  const { route } = useLocation();
  useEffect(() => route(to, true), [to]);
  return null;
}

function Pages() {
  return (
    <Router>
      <Route path="/" component={() => <Redirect to="/runs" />} />
      <Route path="/sign-in" component={() => <Redirect to="/runs" />} />
      <Route path="/runs" component={Runs} />
      <Route path="/runs/:runId" component={Run} />
      <Route path="/factories" component={Factories} />
      <Route path="/factories/:factoryUid" component={Factory} />
      <Route path="/factories/:factoryUid/tasks/:taskUid" component={Task} />
      <Route path="/schedules" component={Schedules} />
      <Route path="/webhooks" component={Webhooks} />
      <Route path="/factories/:factoryUid/webhooks/:webhookUid" component={Deliveries} />
      <Route path="/outbound-webhooks/:webhookUid" component={Attempts} />
      <Route path="/analytics" component={Analytics} />
      <Route path="/scorers" component={Scorers} />
      <Route path="/benchmarks" component={Benchmarks} />
      <Route path="/benchmarks/:factoryUid/:runUid" component={BenchmarkRun} />
      <Route path="/inbox" component={Inbox} />
      <Route path="/audit" component={Audit} />
      <Route path="/team" component={TeamPage} />
      <Route default component={NotFound} />
    </Router>
  );
}

/** Reads the session the cookie stands for, and the names of its teams. */
async function readSession(): Promise<{ userUid: string; teams: Team[] } | null> {
  try {
    const s = await api<SessionAnswer>('/session');
    const { teams } = await api<{ teams: Team[] }>('/teams');
    const names = new Map(teams.map((t) => [t.uid, t.name]));
    return { userUid: s.user_uid, teams: s.teams.map((t) => ({ ...t, name: names.get(t.uid) ?? t.uid })) };
  } catch {
    return null;
  }
}

function App() {
  const [state, setState] = useState<'checking' | 'signed-out' | { userUid: string; teams: Team[] }>('checking');
  const [team, setTeam] = useState<Team | null>(null);
  const check = async () => {
    const s = await readSession();
    if (!s) return setState('signed-out');
    const chosen = rememberedTeam(s.teams);
    setActiveTeam(chosen?.uid ?? null);
    setTeam(chosen);
    followTeam(chosen?.uid ?? null);
    setState(s);
  };
  useEffect(() => {
    void check();
    return onSignedOut(() => {
      stopLive();
      setState('signed-out');
    });
  }, []);
  if (state === 'checking') return <Loading what="Opening the console" />;
  if (state === 'signed-out') return <SignIn onSignedIn={() => void check()} />;
  const session: SessionInfo = {
    ...state,
    team,
    setTeam(uid) {
      const next = state.teams.find((t) => t.uid === uid) ?? null;
      rememberTeam(uid);
      setActiveTeam(uid);
      setTeam(next);
      followTeam(uid);
    },
    async signOut() {
      await api('/session', { method: 'DELETE' }).catch(() => undefined);
      stopLive();
      setState('signed-out');
    },
  };
  return (
    <SessionContext.Provider value={session}>
      <Shell>
        <ErrorBoundary>
          <Pages key={team?.uid ?? ''} />
        </ErrorBoundary>
      </Shell>
    </SessionContext.Provider>
  );
}

render(
  <LocationProvider scope={/^(?!\/api\/)/}>
    <App />
  </LocationProvider>,
  document.getElementById('app')!,
);
