package views

import (
	"context"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/a-h/templ"

	"github.com/baton-dev/baton/store"
)

// The review screen shows a dozen or more items that rarely change from
// one view to the next, and rendering them is most of what the page costs.
// ReviewPage takes their HTML from an HTMLCache (Review.Items) under a key
// made of everything an item shows: its fields, its handoff's id, thread,
// version and status, the viewer's CSRF token and right to edit, and its
// comment count. Changed data is a different key, so an entry cannot be
// stale; an instance holds only what it rendered itself. An item that
// shows a relative time ("edited by Ana, 3 min ago") is rendered on every
// view.
//
// Whoever changes what DecisionItem, FileItem, RiskItem, itemActions,
// CommentButton or CommentSlot show must change the keys below with them
// (TestReviewItemsCached renders both ways).

// itemKey builds a cache key of length-prefixed fields, in a buffer
// reused from one key to the next (keyBufs): looking a key up allocates
// nothing, only keeping a new entry copies it.
type itemKey struct{ b []byte }

var keyBufs = sync.Pool{New: func() any { return &itemKey{b: make([]byte, 0, 1024)} }}

func newItemKey() *itemKey {
	k := keyBufs.Get().(*itemKey)
	k.b = k.b[:0]
	return k
}

func (k *itemKey) release() {
	if cap(k.b) <= 64<<10 {
		keyBufs.Put(k)
	}
}

func (k *itemKey) str(s string) *itemKey {
	k.b = strconv.AppendInt(k.b, int64(len(s)), 10)
	k.b = append(k.b, ':')
	k.b = append(k.b, s...)
	return k
}

func (k *itemKey) bool(v bool) *itemKey {
	if v {
		k.b = append(k.b, '1')
	} else {
		k.b = append(k.b, '0')
	}
	return k
}

func (k *itemKey) int(n int) *itemKey {
	k.b = strconv.AppendInt(k.b, int64(n), 10)
	k.b = append(k.b, ';')
	return k
}

// start writes what every item of h shows beside its own fields: the
// handoff, the viewer and the item's comment button.
func (k *itemKey) start(ctx context.Context, kind string, h *store.Handoff, id string) *itemKey {
	k.str(kind).str(id).str(h.ID).str(h.ThreadID).int(h.Version).str(string(h.Status))
	k.bool(CanEdit(ctx)).str(CSRF(ctx))
	if p := ReviewPanelFrom(ctx); p != nil {
		n := p.Counts[threadKey(itemAnchor(kind, id))]
		k.bool(true).str(p.Base).int(n.Threads).int(n.Open).int(n.Total)
	} else {
		k.bool(false)
	}
	return k
}

// showsTime reports whether an item's EditedBy shows a relative time.
func showsTime(s store.Source, name string) bool { return name != "" && s != store.SourceAI }

func decisionKey(ctx context.Context, h *store.Handoff, d *store.Decision) *itemKey {
	if showsTime(d.Source, d.UpdatedBy) {
		return nil
	}
	k := newItemKey()
	k.start(ctx, "decisions", h, d.ID).str(d.Label).str(d.Content).str(string(d.Source)).str(d.UpdatedBy)
	k.bool(d.Confidence != nil)
	if d.Confidence != nil {
		k.str(strconv.FormatFloat(*d.Confidence, 'g', -1, 64))
	}
	k.bool(d.DuringPlanning).str(messageLink(h, d.MessageIDs))
	return k
}

func fileKey(ctx context.Context, h *store.Handoff, f *store.FileRef) *itemKey {
	if showsTime(f.Source, f.UpdatedBy) {
		return nil
	}
	k := newItemKey()
	k.start(ctx, "files", h, f.ID).str(f.Path).str(string(f.Relevance)).str(f.Context).str(string(f.Source)).str(f.UpdatedBy)
	k.str(messageLink(h, f.MessageIDs))
	return k
}

func riskKey(ctx context.Context, h *store.Handoff, r *store.Risk) *itemKey {
	if showsTime(r.Source, r.UpdatedBy) {
		return nil
	}
	k := newItemKey()
	k.start(ctx, "risks", h, r.ID).str(string(r.Severity)).str(r.Description).str(r.Mitigation).str(string(r.Source)).str(r.UpdatedBy)
	k.str(messageLink(h, r.MessageIDs))
	return k
}

// cachedItem renders item through c under key, and gives key back to
// keyBufs; with no cache or no key it renders item.
func cachedItem(c *HTMLCache, key *itemKey, item templ.Component) templ.Component {
	if c == nil || key == nil {
		if key != nil {
			key.release()
		}
		return item
	}
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		defer key.release()
		if html, ok := c.lookup(key.b); ok {
			_, err := io.WriteString(w, html)
			return err
		}
		var b strings.Builder
		if err := item.Render(ctx, &b); err != nil {
			return err
		}
		c.Put(string(key.b), b.String())
		_, err := io.WriteString(w, b.String())
		return err
	})
}
