/** A run's conversation as its turns and message blocks, and its transcript to download. */
import { apiUrl } from '../api';
import { useApi } from '../hooks';
import { Time } from '../ui/format';
import { Async, Empty } from '../ui/status';

interface Content {
  type: string;
  text?: string;
  name?: string;
  category?: string;
}

interface Step {
  id: string;
  description?: string;
  summary?: string;
  started_at?: string;
  messages: Array<{ role: string; timestamp?: string; message_ids: string[]; content: Content[] }>;
}

const contentText = (c: Content) => c.text ?? (c.name ? `[${c.category ?? c.type}: ${c.name}]` : `[${c.type}]`);

export function Conversation({ runId }: { runId: string }) {
  const conversation = useApi<{ steps: Step[] }>(`/agent/runs/${runId}/conversation`, {}, ['run']);
  return (
    <section aria-labelledby="conversation">
      <h2 id="conversation">Conversation</h2>
      <p>
        <a href={apiUrl(`/agent/runs/${runId}/transcript`)}>Download the transcript (JSON)</a>
      </p>
      <Async state={conversation} what="Loading the conversation">
        {({ steps }) =>
          steps.length === 0 ? (
            <Empty>No messages yet: the conversation fills as the run executes.</Empty>
          ) : (
            steps.map((s) => (
              <article key={s.id} class="turn">
                <h3>
                  {s.description ?? 'Turn'} <Time iso={s.started_at} />
                </h3>
                {s.messages.map((m) => (
                  <div key={m.message_ids.join()} class={`message role-${m.role}`}>
                    <strong>{m.role}</strong>
                    {m.content.map((c, i) => (
                      <p key={i}>{contentText(c)}</p>
                    ))}
                  </div>
                ))}
                {s.summary && <p class="muted">{s.summary}</p>}
              </article>
            ))
          )
        }
      </Async>
    </section>
  );
}
