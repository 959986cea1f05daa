package accounts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/formward/formward/application/dispatch"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/retry"
	"github.com/formward/formward/ports"
)

// Account mail that a request asks for (a password link) is not sent by the request: the
// request seals what the mail needs into the account mail outbox and answers, and the
// AccountMailSender sends it afterwards, retrying failed sends on the delivery retry schedule.
// So the answer never waits on the mail relay, and a request for an address without an
// account costs what any other does.

// Kinds of account mail.
const (
	// accountMailPasswordLink is a "forgot password" request; its payload is the address typed.
	accountMailPasswordLink = "password_link"
	// accountMailMessage is a message written by the use case that queued it (a respondent's
	// resume link); its payload is the sealed ports.Mail.
	accountMailMessage = "message"
)

// PrefixAccountMail is the prefix of the account mail outbox's item IDs.
const PrefixAccountMail = "aml"

const (
	// accountMailBatch is the most items a sender claims at once.
	accountMailBatch = 10
	// accountMailLease hides claimed items from other senders; it outlasts a batch of sends
	// (each bounded by the relay's timeout).
	accountMailLease = 5 * time.Minute
	// accountMailPoll is how often an idle sender looks for due items; Notify wakes it at once
	// for mail queued in its own process.
	accountMailPoll = time.Second
)

// accountMailAAD binds a sealed payload to its item, so it cannot be moved to another.
func accountMailAAD(id string) []byte { return []byte("account_mail:" + id) }

// AccountMailObserver hears what the sender does, for logs. It never sees a link.
type AccountMailObserver interface {
	// Failed is called when a step failed; gaveUp is true when the item will not be tried again.
	Failed(kind string, attempt int, gaveUp bool, err error)
}

// NopAccountMailObserver ignores everything.
type NopAccountMailObserver struct{}

func (NopAccountMailObserver) Failed(string, int, bool, error) {}

// AccountMailSender sends the account mail outbox's items. Several may run at once (one per
// serve process): a claimed item is hidden from the others for accountMailLease.
type AccountMailSender struct {
	outbox    ports.AccountMailOutbox
	users     ports.UserRepository
	tokens    ports.UserTokenRepository
	mailer    ports.Mailer
	cipher    ports.Cipher
	clock     ports.Clock
	retry     retry.Schedule
	publicURL string
	appName   string
	wake      chan struct{}
}

// NewAccountMailSender makes the sender; retry is the wait after each failed send (the zero
// value is retry.Default), publicURL the base of the links, appName signs the mail.
func NewAccountMailSender(outbox ports.AccountMailOutbox, users ports.UserRepository, tokens ports.UserTokenRepository,
	mailer ports.Mailer, cipher ports.Cipher, clock ports.Clock, retry retry.Schedule, publicURL, appName string) *AccountMailSender {
	return &AccountMailSender{outbox: outbox, users: users, tokens: tokens, mailer: mailer, cipher: cipher, clock: clock,
		retry: retry, publicURL: publicURL, appName: appName, wake: make(chan struct{}, 1)}
}

// Notify wakes an idle sender at once. It never blocks.
func (s *AccountMailSender) Notify() { dispatch.Signal(s.wake) }

// Run sends due items until ctx ends.
func (s *AccountMailSender) Run(ctx context.Context, o AccountMailObserver) {
	for ctx.Err() == nil {
		n, err := s.SendDue(ctx, o)
		if err != nil && ctx.Err() == nil {
			o.Failed("", 0, false, err)
		}
		if n == accountMailBatch && err == nil {
			continue // a full batch: more are probably due
		}
		t := time.NewTimer(accountMailPoll)
		select {
		case <-t.C:
		case <-s.wake:
		case <-ctx.Done():
		}
		t.Stop()
	}
}

// SendDue claims up to a batch of due items and handles each once: sent (or nothing to send)
// and forgotten, or rescheduled after a failure, or given up after the schedule's last
// attempt. It returns how many it claimed; the error is a failed claim.
func (s *AccountMailSender) SendDue(ctx context.Context, o AccountMailObserver) (int, error) {
	items, err := s.outbox.Claim(ctx, s.clock.Now(), accountMailLease, accountMailBatch)
	if err != nil {
		return 0, fmt.Errorf("claim account mail: %w", err)
	}
	for _, m := range items {
		s.handle(ctx, m, o)
	}
	return len(items), nil
}

func (s *AccountMailSender) handle(ctx context.Context, m ports.QueuedAccountMail, o AccountMailObserver) {
	var err error
	switch m.Kind {
	case accountMailPasswordLink:
		err = s.sendPasswordLink(ctx, m)
	case accountMailMessage:
		err = s.sendMessage(ctx, m)
	default:
		err = fmt.Errorf("unknown account mail kind %q", m.Kind)
	}
	if err == nil {
		if derr := s.outbox.Delete(ctx, m.ID); derr != nil {
			// Claimed again after the lease and sent once more: at least once, never lost.
			o.Failed(m.Kind, m.Attempts+1, false, derr)
		}
		return
	}
	attempts := m.Attempts + 1
	wait, again := s.retry.After(attempts)
	o.Failed(m.Kind, attempts, !again, err)
	if again {
		err = s.outbox.Retry(ctx, m.ID, attempts, s.clock.Now().Add(wait))
	} else {
		err = s.outbox.Delete(ctx, m.ID)
	}
	if err != nil {
		o.Failed(m.Kind, attempts, false, err)
	}
}

// sendPasswordLink looks the address up and, when it has an account, mails it a one-time link
// valid for PasswordResetValidity from now. A link whose mail could not be sent is spent at
// once, so only links that went out can be used.
func (s *AccountMailSender) sendPasswordLink(ctx context.Context, m ports.QueuedAccountMail) error {
	email, err := s.cipher.Open(ctx, accountsKeyScope, m.Payload, accountMailAAD(m.ID))
	if err != nil {
		return fmt.Errorf("open password link request: %w", err)
	}
	u, err := s.users.FindByEmail(ctx, string(email))
	if errors.Is(err, domain.ErrNotFound) {
		return nil // no account: nothing to send, and the answer was the same
	}
	if err != nil {
		return fmt.Errorf("find user: %w", err)
	}
	token, err := newSecretToken()
	if err != nil {
		return err
	}
	now := s.clock.Now()
	hash := hashToken(token)
	err = s.tokens.Put(ctx, ports.UserToken{Purpose: ports.TokenPassword, TokenHash: hash, UserID: u.ID(),
		ExpiresAt: now.Add(PasswordResetValidity)})
	if err != nil {
		return fmt.Errorf("store password link: %w", err)
	}
	err = s.mailer.Send(ctx, ports.Mail{
		To:      u.Email(),
		Subject: "Reset your " + s.appName + " password",
		Text: "Somebody (hopefully you) asked to reset the password of your " + s.appName + " account.\n\n" +
			"Set a new password here within the next hour:\n\n" + passwordLink(s.publicURL, token) + "\n\n" +
			"If it was not you, ignore this message: your password stays as it is.\n",
	})
	if err != nil {
		if _, serr := s.tokens.Spend(ctx, ports.TokenPassword, hash, now); serr != nil && !errors.Is(serr, domain.ErrNotFound) {
			err = errors.Join(err, fmt.Errorf("spend unsent password link: %w", serr))
		}
		return fmt.Errorf("send password link: %w", err)
	}
	return nil
}

// sendMessage sends a queued message as it was written.
func (s *AccountMailSender) sendMessage(ctx context.Context, m ports.QueuedAccountMail) error {
	plain, err := s.cipher.Open(ctx, accountsKeyScope, m.Payload, accountMailAAD(m.ID))
	if err != nil {
		return fmt.Errorf("open queued message: %w", err)
	}
	var mail ports.Mail
	if err := json.Unmarshal(plain, &mail); err != nil {
		return fmt.Errorf("decode queued message: %w", err)
	}
	if err := s.mailer.Send(ctx, mail); err != nil {
		return fmt.Errorf("send queued message: %w", err)
	}
	return nil
}

// MailQueue queues messages in the account mail outbox, sealed, for the sender.
type MailQueue struct {
	outbox ports.AccountMailOutbox
	cipher ports.Cipher
	ids    ports.IDs
	clock  ports.Clock
	wake   func()
}

var _ ports.MailQueue = (*MailQueue)(nil)

// NewMailQueue makes the queue; wake tells the sender that mail was queued.
func NewMailQueue(outbox ports.AccountMailOutbox, cipher ports.Cipher, ids ports.IDs, clock ports.Clock, wake func()) *MailQueue {
	return &MailQueue{outbox: outbox, cipher: cipher, ids: ids, clock: clock, wake: wake}
}

// Queue seals the message into the outbox and wakes the sender.
func (q *MailQueue) Queue(ctx context.Context, m ports.Mail) error {
	plain, err := json.Marshal(m)
	if err != nil {
		return err
	}
	id := q.ids.New(PrefixAccountMail)
	if err := q.cipher.EnsureKey(ctx, accountsKeyScope); err != nil {
		return err
	}
	sealed, err := q.cipher.Seal(ctx, accountsKeyScope, plain, accountMailAAD(id))
	if err != nil {
		return fmt.Errorf("seal message: %w", err)
	}
	if err := q.outbox.Add(ctx, ports.QueuedAccountMail{ID: id, Kind: accountMailMessage, Payload: sealed, CreatedAt: q.clock.Now()}); err != nil {
		return err
	}
	q.wake()
	return nil
}
