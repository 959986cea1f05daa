{{/* Names and labels. */}}
{{- define "formward.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "formward.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "formward.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "formward.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "formward.selectorLabels" -}}
app.kubernetes.io/name: {{ include "formward.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "formward.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "formward.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* The image: repository:tag, tag-variant for a variant, or repository@digest. */}}
{{- define "formward.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag -}}
{{- if .Values.image.variant -}}
{{- $tag = printf "%s-%s" $tag .Values.image.variant -}}
{{- end -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{/* Whether serve takes scheduled backups (backup.interval other than 0). */}}
{{- define "formward.scheduledBackups" -}}
{{- if not (has (toString .Values.backup.interval) (list "0" "0s" "")) -}}true{{- end -}}
{{- end -}}

{{- define "formward.secretName" -}}
{{- default (include "formward.fullname" .) .Values.secret.existingSecret -}}
{{- end -}}

{{- define "formward.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "formward.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Whether serve may ever run more than one pod. */}}
{{- define "formward.serveScaled" -}}
{{- if or (gt (int .Values.serve.replicas) 1) (and .Values.serve.autoscaling.enabled (gt (int .Values.serve.autoscaling.maxReplicas) 1)) -}}true{{- end -}}
{{- end -}}

{{- define "formward.publicURL" -}}
{{- if .Values.publicURL -}}
{{- .Values.publicURL | trimSuffix "/" -}}
{{- else if and .Values.ingress.enabled .Values.ingress.hosts -}}
{{- printf "https://%s" (first .Values.ingress.hosts).host -}}
{{- end -}}
{{- end -}}

{{/*
The settings the chart refuses: it fails the render with the reason rather than installing
something that loses files or events.
*/}}
{{- define "formward.validate" -}}
{{- if not (include "formward.publicURL" .) -}}
{{- fail "publicURL is required (or enable the ingress): file links would otherwise point at the pod address" -}}
{{- end -}}
{{- if include "formward.serveScaled" . -}}
{{- if not .Values.s3.endpoint -}}
{{- fail "serve runs more than one replica (serve.replicas or serve.autoscaling): s3.endpoint is required, since files kept on a pod's disk exist on that pod only" -}}
{{- end -}}
{{- if not .Values.database.postgres -}}
{{- fail "serve runs more than one replica: database.postgres is required (SQLite has one writer on one volume)" -}}
{{- end -}}
{{- end -}}
{{- if and .Values.persistence.enabled (include "formward.serveScaled" .) -}}
{{- fail "persistence is one ReadWriteOnce volume for one serve pod, and serve runs more than one: disable persistence (files, backups and the tombstone log go to s3.endpoint)" -}}
{{- end -}}
{{- if and (not .Values.database.postgres) (not .Values.persistence.enabled) -}}
{{- fail "the embedded mode keeps its SQLite database on the data volume: enable persistence (or set database.postgres)" -}}
{{- end -}}
{{- if and .Values.database.postgres (not .Values.s3.endpoint) (not .Values.persistence.enabled) -}}
{{- fail "database.postgres without s3.endpoint keeps uploaded files, backups and the tombstone log in /data: enable persistence (a PersistentVolumeClaim), or set s3.endpoint; an emptyDir would lose them at every restart" -}}
{{- end -}}
{{- if and .Values.database.postgres (include "formward.scheduledBackups" .) (ne .Values.image.variant "postgres") -}}
{{- fail "database.postgres with scheduled backups (backup.interval): serve runs pg_dump, which only the image variant with the PostgreSQL client tools has: set image.variant: postgres (deployments/Dockerfile --target postgres), or backup.interval: \"0\" and back the database up yourself" -}}
{{- end -}}
{{- if or .Values.relay.enabled .Values.worker.enabled -}}
{{- if not .Values.kafka.brokers -}}
{{- fail "relay and worker need kafka.brokers" -}}
{{- end -}}
{{- if not .Values.database.postgres -}}
{{- fail "relay and worker need database.postgres (the processes share the database)" -}}
{{- end -}}
{{- end -}}
{{- if and .Values.kafka.brokers (not (and .Values.relay.enabled .Values.worker.enabled)) -}}
{{- fail "with kafka.brokers, serve serves the API only: enable relay and worker, or events are never delivered" -}}
{{- end -}}
{{- if and .Values.database.postgres (not .Values.secret.existingSecret) (not .Values.database.url) -}}
{{- fail "database.postgres needs database.url (or secret.existingSecret with a database-url key)" -}}
{{- end -}}
{{- end -}}

{{/* The data dir and temp volumes of a pod. */}}
{{- define "formward.volumes" -}}
- name: data
{{- if and .persistence .root.Values.persistence.enabled }}
  persistentVolumeClaim:
    claimName: {{ default (printf "%s-data" (include "formward.fullname" .root)) .root.Values.persistence.existingClaim }}
{{- else }}
  emptyDir: {}
{{- end }}
- name: tmp
  emptyDir:
    sizeLimit: {{ .root.Values.tmp.sizeLimit }}
{{- end -}}

{{- define "formward.volumeMounts" -}}
- name: data
  mountPath: /data
- name: tmp
  mountPath: /tmp
{{- end -}}

{{/* A variable read from the Secret. */}}
{{- define "formward.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ include "formward.secretName" .root }}
      key: {{ .key }}
      {{- if .optional }}
      optional: true
      {{- end }}
{{- end -}}

{{/* The settings every role reads. */}}
{{- define "formward.commonEnv" -}}
- name: FORMWARD_DATA_DIR
  value: /data
- name: FORMWARD_LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{ include "formward.secretEnv" (dict "root" . "name" "FORMWARD_MASTER_KEY" "key" "master-key") }}
{{ include "formward.secretEnv" (dict "root" . "name" "FORMWARD_PREVIOUS_MASTER_KEYS" "key" "previous-master-keys" "optional" true) }}
{{ include "formward.secretEnv" (dict "root" . "name" "FORMWARD_IP_HASH_SECRET" "key" "ip-hash-secret" "optional" true) }}
{{- if .Values.database.postgres }}
{{ include "formward.secretEnv" (dict "root" . "name" "FORMWARD_DATABASE_URL" "key" "database-url") }}
{{- end }}
{{- if .Values.database.maxConns }}
- name: FORMWARD_DB_MAX_CONNS
  value: {{ .Values.database.maxConns | quote }}
{{- end }}
{{- if .Values.s3.endpoint }}
- name: FORMWARD_S3_ENDPOINT
  value: {{ .Values.s3.endpoint | quote }}
- name: FORMWARD_S3_BUCKET
  value: {{ .Values.s3.bucket | quote }}
- name: FORMWARD_S3_REGION
  value: {{ .Values.s3.region | quote }}
- name: FORMWARD_S3_USE_SSL
  value: {{ .Values.s3.useSSL | quote }}
{{ include "formward.secretEnv" (dict "root" . "name" "FORMWARD_S3_ACCESS_KEY" "key" "s3-access-key" "optional" true) }}
{{ include "formward.secretEnv" (dict "root" . "name" "FORMWARD_S3_SECRET_KEY" "key" "s3-secret-key" "optional" true) }}
{{- end }}
{{ include "formward.secretEnv" (dict "root" . "name" "FORMWARD_SMTP_URL" "key" "smtp-url" "optional" true) }}
{{- if .Values.smtp.from }}
- name: FORMWARD_SMTP_FROM
  value: {{ .Values.smtp.from | quote }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The Kafka settings of serve, relay and worker. */}}
{{- define "formward.kafkaEnv" -}}
{{- if .Values.kafka.brokers }}
- name: FORMWARD_KAFKA_BROKERS
  value: {{ .Values.kafka.brokers | quote }}
- name: FORMWARD_KAFKA_TOPIC
  value: {{ .Values.kafka.topic | quote }}
{{- end }}
{{- end -}}

{{- define "formward.metricsEnv" -}}
- name: FORMWARD_METRICS_ADDR
  value: {{ printf "0.0.0.0:%d" (int .Values.metrics.port) | quote }}
{{- end -}}

{{- define "formward.podSpecCommon" -}}
serviceAccountName: {{ include "formward.serviceAccountName" . }}
{{ include "formward.podSecurity" . }}
{{- end -}}

{{/* Without the service account, which a pre-install hook cannot count on yet. */}}
{{- define "formward.podSecurity" -}}
automountServiceAccountToken: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end -}}
