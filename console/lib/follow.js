// Keeps the newest message in view while a reply streams in, as long as the reader is at the
// bottom of the page; scrolling up stops following (and offers a way back) so a long answer can
// be read while the next one arrives.
import { useEffect, useLayoutEffect, useRef, useState } from '../vendor/preact-htm.js';

/** Closer to the bottom than this counts as "at the bottom". */
const SLACK_PX = 80;

const atBottom = () => {
  const el = document.scrollingElement;
  return el.scrollHeight - (el.scrollTop + innerHeight) <= SLACK_PX;
};
const toBottom = () => document.scrollingElement.scrollTo({ top: document.scrollingElement.scrollHeight });

/**
 * Follows the page's bottom after every render where `content` changed. Returns
 * `{following, jump}`: whether it follows, and a function that scrolls down and follows again.
 */
export function useFollowBottom(content) {
  const pinned = useRef(true);
  const [following, setFollowing] = useState(true);
  useEffect(() => {
    const onScroll = () => {
      pinned.current = atBottom();
      setFollowing(pinned.current);
    };
    addEventListener('scroll', onScroll, { passive: true });
    return () => removeEventListener('scroll', onScroll);
  }, []);
  useLayoutEffect(() => {
    if (pinned.current) toBottom();
  }, [content]);
  const jump = () => {
    pinned.current = true;
    setFollowing(true);
    toBottom();
  };
  return { following, jump };
}
