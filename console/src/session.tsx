/** Who is signed in, the teams the key opens, and the team the console acts for. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

export interface Team {
  uid: string;
  name: string;
  role: 'admin' | 'member';
}

export interface SessionInfo {
  userUid: string;
  teams: Team[];
  team: Team | null;
  setTeam: (uid: string) => void;
  signOut: () => Promise<void>;
}

export const SessionContext = createContext<SessionInfo | null>(null);

export function useSession(): SessionInfo {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a session');
  return s;
}

/** Whether the active team's role may take admin actions (the console offers only what the role may do). */
export const isAdmin = (s: SessionInfo) => s.team?.role === 'admin';

const TEAM_KEY = 'shopfloor.team';

/** The team chosen last in this browser (a team uid, nothing secret), if the key still opens it. */
export function rememberedTeam(teams: Team[]): Team | null {
  const uid = localStorage.getItem(TEAM_KEY);
  return teams.find((t) => t.uid === uid) ?? teams[0] ?? null;
}

export const rememberTeam = (uid: string) => localStorage.setItem(TEAM_KEY, uid);
