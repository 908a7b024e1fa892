/** A console URL that names no page. */
import { Page } from '../ui/page';

export default function NotFound() {
  return (
    <Page title="Page not found">
      <p>
        This address names no page of the console. Go to <a href="/runs">Runs</a>.
      </p>
    </Page>
  );
}
