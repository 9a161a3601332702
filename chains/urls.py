from django.urls import path

from chains.views import home

app_name = "chains"

urlpatterns = [
    path("", home.home, name="home"),
]
