package bootstrap

import (
	"context"
	"fmt"
	"strconv"

	"github.com/formward/formward/adapters/actionkit"
	"github.com/formward/formward/adapters/automation"
	"github.com/formward/formward/adapters/chat"
	"github.com/formward/formward/adapters/email"
	"github.com/formward/formward/adapters/extend"
	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/adapters/sheets"
	"github.com/formward/formward/adapters/web"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/ports"
)

// Formward's own action types, object stores and captcha providers register here, through
// the same functions as an extension's (adapters/extend): the runner map, the file store and the
// captcha providers are built from the registry alone, so a built-in and a registered one are
// configured, wrapped and observed alike.
func init() {
	extend.RegisterAction(email.Type, func(d extend.ActionDeps) (ports.ActionRunner, error) {
		return email.New(email.Config{
			URL: d.Getenv("FORMWARD_SMTP_URL"), From: d.Getenv("FORMWARD_SMTP_FROM"),
			CAFile: d.CAFile, Timeout: d.Timeout, Breaker: actionkit.FromExtend(d.Breaker),
		})
	})
	extend.RegisterAction(automation.TypeWebhook, func(d extend.ActionDeps) (ports.ActionRunner, error) {
		return automation.NewWebhook(d.Sender), nil
	})
	extend.RegisterAction(chat.Type, func(d extend.ActionDeps) (ports.ActionRunner, error) {
		return chat.New(chat.Config{
			BaseURL: d.Getenv("FORMWARD_SLACK_API_URL"), CAFile: d.CAFile, Timeout: d.Timeout, Breaker: actionkit.FromExtend(d.Breaker),
		})
	})
	extend.RegisterAction(sheets.Type, func(d extend.ActionDeps) (ports.ActionRunner, error) {
		return sheets.New(sheets.Config{
			BaseURL: d.Getenv("FORMWARD_GOOGLE_SHEETS_URL"), TokenURL: d.Getenv("FORMWARD_GOOGLE_TOKEN_URL"),
			CAFile: d.CAFile, Timeout: d.Timeout, Breaker: actionkit.FromExtend(d.Breaker),
		})
	})
	extend.RegisterAction(automation.TypeTrigger, func(d extend.ActionDeps) (ports.ActionRunner, error) {
		return automation.NewTrigger(d.Sender), nil
	})

	extend.RegisterObjectStore(objectStoreLocal, func(_ context.Context, d extend.ObjectStoreDeps) (ports.ObjectStore, error) {
		return objectstore.NewLocal(objectstore.LocalDir(d.DataDir))
	})
	extend.RegisterObjectStore(objectStoreS3, func(ctx context.Context, d extend.ObjectStoreDeps) (ports.ObjectStore, error) {
		useSSL, err := strconv.ParseBool(d.Getenv("FORMWARD_S3_USE_SSL"))
		if err != nil {
			return nil, fmt.Errorf("FORMWARD_S3_USE_SSL: not true or false")
		}
		return objectstore.NewS3(ctx, objectstore.S3Config{
			Endpoint: d.Getenv("FORMWARD_S3_ENDPOINT"), Bucket: d.Getenv("FORMWARD_S3_BUCKET"),
			AccessKey: d.Getenv("FORMWARD_S3_ACCESS_KEY"), SecretKey: d.Getenv("FORMWARD_S3_SECRET_KEY"),
			Region: d.Getenv("FORMWARD_S3_REGION"), UseSSL: useSSL, CAFile: d.Getenv("FORMWARD_S3_CA_FILE"),
		})
	})

	for p, variable := range map[form.CaptchaProvider]string{
		form.CaptchaTurnstile: "FORMWARD_TURNSTILE_VERIFY_URL",
		form.CaptchaHCaptcha:  "FORMWARD_HCAPTCHA_VERIFY_URL",
		form.CaptchaReCAPTCHA: "FORMWARD_RECAPTCHA_VERIFY_URL",
	} {
		w := web.CaptchaWidgets[p]
		extend.RegisterCaptcha(string(p), extend.Captcha{
			Script: w.Script, Origins: w.Origins, Class: w.Class, Response: w.Response,
			Verifier: func(d extend.CaptchaDeps) (ports.Captcha, error) {
				return web.SiteVerify{URL: d.Getenv(variable), Default: web.DefaultCaptchaVerifyURLs[p]}, nil
			},
		})
	}
}

// The built-in object stores: local disk under the data dir, or an S3-compatible bucket.
const (
	objectStoreLocal = "local"
	objectStoreS3    = "s3"
)
