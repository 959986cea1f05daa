package web

import "strings"

// resumeWords are the words of save and resume (settings.partial): the saved page, the
// notices of a resume link, in the languages of the page's own words (i18n.go).
type resumeWords struct {
	SaveFailed, Welcome                            string
	Unknown, OtherForm, Expired, Used              string
	SavedTitle, SavedHeading, SavedText, FilesNote string
	LinkLabel, ContinueNow, EmailLabel, SendLink   string
	// Sent holds {email}; SavedText holds {date}.
	Sent, BadEmail, TooMany, TooOften, NoMail string
}

var resumeCatalogue = map[string]*resumeWords{
	"en": {
		SaveFailed: "Your answers could not be saved for later just now. They are still here: try again in a moment.",
		Welcome:    "Welcome back: your saved answers are filled in. Files are not saved, so attach them again.",
		Unknown:    "This resume link is not valid: check that you copied all of it. You can start the form again below.",
		OtherForm:  "This resume link belongs to another form. You can fill in this one below.",
		Expired:    "This resume link has expired, and the answers saved with it were deleted. You can start the form again below.",
		Used:       "This resume link was already used: the response saved with it has been sent. You can fill in the form again below.",
		SavedTitle: "Saved", SavedHeading: "Your answers are saved",
		SavedText: "Continue where you left off with this link until {date}. Anyone who has it can see and change your answers, so keep it to yourself.",
		FilesNote: "Files are not saved: attach them again when you continue.",
		LinkLabel: "Your link", ContinueNow: "Continue now", EmailLabel: "Email me the link", SendLink: "Send the link",
		Sent:     "We sent the link to {email}. Check your inbox (and the spam folder).",
		BadEmail: "Enter an email address like name@example.com.",
		TooMany:  "Too many emails were asked for from your connection. Copy the link instead, or try again in a minute.",
		TooOften: "This link was already emailed several times. Copy it from this page instead.",
		NoMail:   "This server cannot send email. Copy the link instead.",
	},
	"de": {
		SaveFailed: "Ihre Antworten konnten gerade nicht gespeichert werden. Sie sind noch da: versuchen Sie es gleich noch einmal.",
		Welcome:    "Willkommen zurück: Ihre gespeicherten Antworten sind eingetragen. Dateien werden nicht gespeichert, bitte hängen Sie sie erneut an.",
		Unknown:    "Dieser Link zum Fortsetzen ist ungültig: Prüfen Sie, ob Sie ihn vollständig kopiert haben. Unten können Sie das Formular neu beginnen.",
		OtherForm:  "Dieser Link gehört zu einem anderen Formular. Unten können Sie dieses ausfüllen.",
		Expired:    "Dieser Link ist abgelaufen, die damit gespeicherten Antworten wurden gelöscht. Unten können Sie das Formular neu beginnen.",
		Used:       "Dieser Link wurde bereits verwendet: Die damit gespeicherte Antwort wurde abgeschickt. Unten können Sie das Formular erneut ausfüllen.",
		SavedTitle: "Gespeichert", SavedHeading: "Ihre Antworten sind gespeichert",
		SavedText: "Mit diesem Link machen Sie bis {date} dort weiter, wo Sie aufgehört haben. Wer ihn hat, kann Ihre Antworten sehen und ändern: Geben Sie ihn nicht weiter.",
		FilesNote: "Dateien werden nicht gespeichert: Hängen Sie sie beim Fortsetzen erneut an.",
		LinkLabel: "Ihr Link", ContinueNow: "Jetzt fortfahren", EmailLabel: "Link per E-Mail senden", SendLink: "Link senden",
		Sent:     "Wir haben den Link an {email} gesendet. Sehen Sie in Ihrem Posteingang (und im Spam-Ordner) nach.",
		BadEmail: "Geben Sie eine E-Mail-Adresse wie name@example.com ein.",
		TooMany:  "Von Ihrer Verbindung wurden zu viele E-Mails angefordert. Kopieren Sie den Link oder versuchen Sie es in einer Minute erneut.",
		TooOften: "Dieser Link wurde schon mehrmals gesendet. Kopieren Sie ihn von dieser Seite.",
		NoMail:   "Dieser Server kann keine E-Mails senden. Kopieren Sie den Link.",
	},
	"fr": {
		SaveFailed: "Vos réponses n'ont pas pu être enregistrées pour l'instant. Elles sont toujours là : réessayez dans un instant.",
		Welcome:    "Bon retour : vos réponses enregistrées sont remplies. Les fichiers ne sont pas enregistrés, joignez-les à nouveau.",
		Unknown:    "Ce lien de reprise n'est pas valide : vérifiez que vous l'avez copié en entier. Vous pouvez recommencer le formulaire ci-dessous.",
		OtherForm:  "Ce lien de reprise appartient à un autre formulaire. Vous pouvez remplir celui-ci ci-dessous.",
		Expired:    "Ce lien de reprise a expiré et les réponses enregistrées avec lui ont été supprimées. Vous pouvez recommencer le formulaire ci-dessous.",
		Used:       "Ce lien de reprise a déjà servi : la réponse enregistrée avec lui a été envoyée. Vous pouvez remplir le formulaire à nouveau ci-dessous.",
		SavedTitle: "Enregistré", SavedHeading: "Vos réponses sont enregistrées",
		SavedText: "Reprenez là où vous vous êtes arrêté avec ce lien jusqu'au {date}. Toute personne qui l'a peut voir et modifier vos réponses : gardez-le pour vous.",
		FilesNote: "Les fichiers ne sont pas enregistrés : joignez-les à nouveau en reprenant.",
		LinkLabel: "Votre lien", ContinueNow: "Continuer maintenant", EmailLabel: "M'envoyer le lien par e-mail", SendLink: "Envoyer le lien",
		Sent:     "Nous avons envoyé le lien à {email}. Consultez votre boîte de réception (et les indésirables).",
		BadEmail: "Saisissez une adresse e-mail comme nom@example.com.",
		TooMany:  "Trop d'e-mails ont été demandés depuis votre connexion. Copiez plutôt le lien, ou réessayez dans une minute.",
		TooOften: "Ce lien a déjà été envoyé plusieurs fois. Copiez-le depuis cette page.",
		NoMail:   "Ce serveur ne peut pas envoyer d'e-mails. Copiez plutôt le lien.",
	},
	"es": {
		SaveFailed: "No se pudieron guardar tus respuestas ahora mismo. Siguen aquí: inténtalo de nuevo en un momento.",
		Welcome:    "Bienvenido de nuevo: tus respuestas guardadas están rellenadas. Los archivos no se guardan, adjúntalos de nuevo.",
		Unknown:    "Este enlace para continuar no es válido: comprueba que lo copiaste entero. Puedes empezar el formulario de nuevo abajo.",
		OtherForm:  "Este enlace para continuar pertenece a otro formulario. Puedes rellenar este abajo.",
		Expired:    "Este enlace para continuar ha caducado y las respuestas guardadas con él se borraron. Puedes empezar el formulario de nuevo abajo.",
		Used:       "Este enlace para continuar ya se usó: la respuesta guardada con él se envió. Puedes rellenar el formulario de nuevo abajo.",
		SavedTitle: "Guardado", SavedHeading: "Tus respuestas están guardadas",
		SavedText: "Continúa donde lo dejaste con este enlace hasta el {date}. Quien lo tenga puede ver y cambiar tus respuestas, así que no lo compartas.",
		FilesNote: "Los archivos no se guardan: adjúntalos de nuevo al continuar.",
		LinkLabel: "Tu enlace", ContinueNow: "Continuar ahora", EmailLabel: "Enviarme el enlace por correo", SendLink: "Enviar el enlace",
		Sent:     "Enviamos el enlace a {email}. Revisa tu bandeja de entrada (y la carpeta de spam).",
		BadEmail: "Escribe una dirección de correo como nombre@example.com.",
		TooMany:  "Se pidieron demasiados correos desde tu conexión. Copia el enlace o inténtalo de nuevo en un minuto.",
		TooOften: "Este enlace ya se envió varias veces. Cópialo desde esta página.",
		NoMail:   "Este servidor no puede enviar correos. Copia el enlace.",
	},
	"pt": {
		SaveFailed: "Não foi possível guardar as suas respostas agora. Continuam aqui: tente de novo dentro de momentos.",
		Welcome:    "Bem-vindo de volta: as suas respostas guardadas estão preenchidas. Os ficheiros não são guardados, anexe-os de novo.",
		Unknown:    "Este link para continuar não é válido: verifique se o copiou por inteiro. Pode recomeçar o formulário abaixo.",
		OtherForm:  "Este link para continuar pertence a outro formulário. Pode preencher este abaixo.",
		Expired:    "Este link para continuar expirou e as respostas guardadas com ele foram apagadas. Pode recomeçar o formulário abaixo.",
		Used:       "Este link para continuar já foi usado: a resposta guardada com ele foi enviada. Pode preencher o formulário de novo abaixo.",
		SavedTitle: "Guardado", SavedHeading: "As suas respostas estão guardadas",
		SavedText: "Continue onde parou com este link até {date}. Quem o tiver pode ver e alterar as suas respostas, por isso não o partilhe.",
		FilesNote: "Os ficheiros não são guardados: anexe-os de novo ao continuar.",
		LinkLabel: "O seu link", ContinueNow: "Continuar agora", EmailLabel: "Enviar-me o link por email", SendLink: "Enviar o link",
		Sent:     "Enviámos o link para {email}. Veja a sua caixa de entrada (e a pasta de spam).",
		BadEmail: "Escreva um endereço de email como nome@example.com.",
		TooMany:  "Foram pedidos demasiados emails a partir da sua ligação. Copie o link ou tente de novo dentro de um minuto.",
		TooOften: "Este link já foi enviado várias vezes. Copie-o desta página.",
		NoMail:   "Este servidor não envia emails. Copie o link.",
	},
	"nl": {
		SaveFailed: "Je antwoorden konden nu niet worden bewaard. Ze staan er nog: probeer het zo opnieuw.",
		Welcome:    "Welkom terug: je bewaarde antwoorden zijn ingevuld. Bestanden worden niet bewaard, voeg ze opnieuw toe.",
		Unknown:    "Deze link om verder te gaan is ongeldig: controleer of je hem helemaal hebt gekopieerd. Hieronder kun je het formulier opnieuw beginnen.",
		OtherForm:  "Deze link hoort bij een ander formulier. Hieronder kun je dit formulier invullen.",
		Expired:    "Deze link is verlopen en de antwoorden die ermee waren bewaard, zijn verwijderd. Hieronder kun je het formulier opnieuw beginnen.",
		Used:       "Deze link is al gebruikt: het antwoord dat ermee was bewaard, is verstuurd. Hieronder kun je het formulier opnieuw invullen.",
		SavedTitle: "Bewaard", SavedHeading: "Je antwoorden zijn bewaard",
		SavedText: "Ga met deze link verder waar je gebleven was, tot {date}. Iedereen met de link kan je antwoorden zien en wijzigen, dus deel hem niet.",
		FilesNote: "Bestanden worden niet bewaard: voeg ze opnieuw toe als je verdergaat.",
		LinkLabel: "Je link", ContinueNow: "Nu verdergaan", EmailLabel: "Mail mij de link", SendLink: "Link versturen",
		Sent:     "We hebben de link naar {email} gestuurd. Kijk in je inbox (en de spammap).",
		BadEmail: "Vul een e-mailadres in zoals naam@example.com.",
		TooMany:  "Er zijn te veel e-mails aangevraagd vanaf je verbinding. Kopieer de link of probeer het over een minuut opnieuw.",
		TooOften: "Deze link is al meerdere keren gemaild. Kopieer hem van deze pagina.",
		NoMail:   "Deze server kan geen e-mail versturen. Kopieer de link.",
	},
}

// resumeWordsFor returns the save-and-resume words of a language tag's base language,
// English when there are none.
func resumeWordsFor(tag string) *resumeWords {
	if w := byBase(resumeCatalogue, tag); w != nil {
		return w
	}
	return resumeCatalogue["en"]
}

// fill puts value in place of {name} in text.
func fill(text, name, value string) string { return strings.ReplaceAll(text, "{"+name+"}", value) }
