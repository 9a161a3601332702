from django.apps import AppConfig


class ChainsConfig(AppConfig):
    name = "chains"
    verbose_name = "Chains"

    def ready(self) -> None:
        # The models reach the task queue only through this hook, so they never
        # import chains.tasks (which imports them): the dependency goes one way.
        from chains import tasks
        from chains.models import connect_mailer, connect_queue

        connect_queue(tasks.send_shard)
        connect_mailer(tasks.queue_mail)
